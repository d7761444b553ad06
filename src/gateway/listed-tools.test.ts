import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { instructionsFor, isMetaToolOf } from './listed-tools.ts';
import { CALL_TOOL, LIST_CAPABILITIES, LOAD_CAPABILITY, SEARCH_TOOLS } from './meta-tools.ts';

describe('listed tools by exposure mode', () => {
  test('each mode exposes its own meta-tools and no others', () => {
    const all = [SEARCH_TOOLS, LIST_CAPABILITIES, LOAD_CAPABILITY, CALL_TOOL];
    assert.deepEqual(all.filter((name) => isMetaToolOf('search', name)), [SEARCH_TOOLS, CALL_TOOL]);
    assert.deepEqual(all.filter((name) => isMetaToolOf('capabilities', name)), [LIST_CAPABILITIES, LOAD_CAPABILITY, CALL_TOOL]);
    assert.deepEqual(all.filter((name) => isMetaToolOf('all', name)), []);
  });

  test('instructions count the catalog and name the way in of each mode', () => {
    const overview = { toolCount: 12, plugins: [{ name: 'a', title: 'A', toolCount: 12 }] };
    assert.match(instructionsFor('search', overview), /in front of 12 tools from 1 plugin\. Call search_tools/);
    assert.match(instructionsFor('all', { toolCount: 1, plugins: [overview.plugins[0]!, { name: 'b', title: 'B', toolCount: 0 }] }), /in front of 1 tool from 2 plugins\./);
    assert.match(instructionsFor('capabilities', overview), /Call list_capabilities/);
    assert.match(instructionsFor('all', overview), /Every tool you may use is listed\.$/);
  });
});
