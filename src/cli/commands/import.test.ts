import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { importRow } from './import.ts';

describe('quiver import table rows', () => {
  it('counts tools in plain English: 1 tool, 9 tools', () => {
    const installed = (tools: number) => importRow({ entry: 'e', plugin: 'p', status: 'installed', source: 'npm:x', tools, warnings: [] });
    assert.deepEqual(installed(1), ['installed', 'e', 'p', '1 tool from npm:x']);
    assert.deepEqual(installed(9), ['installed', 'e', 'p', '9 tools from npm:x']);
    assert.deepEqual(importRow({ entry: 'e', plugin: 'p', status: 'installed', source: 'npm:x', tools: 1, warnings: ["run 'quiver plugin mount p /data'"] }), ['needs a step', 'e', 'p', '1 tool; then run: quiver plugin mount p /data']);
  });
});
