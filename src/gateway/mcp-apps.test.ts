import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isAppTool, showAppToolMeta } from './mcp-apps.ts';
import { formatResourceUri, parseResourceUri } from './meta-tools.ts';

describe('MCP Apps addressing (issue #24)', () => {
  it('a ui:// URI keeps its scheme, namespaced inside it, and resolves back', () => {
    assert.equal(formatResourceUri('weather', 'ui://forecast/view.html'), 'ui://weather/forecast/view.html');
    assert.deepEqual(parseResourceUri('ui://weather/forecast/view.html'), { pluginName: 'weather', uri: 'ui://forecast/view.html' });
    // Other schemes keep Quiver's form.
    assert.equal(formatResourceUri('weather', 'file:///a b'), 'quiver://weather/file%3A%2F%2F%2Fa%20b');
    // Not a plugin's address: no plugin part, or a name no plugin can have.
    assert.equal(parseResourceUri('ui://view.html'), undefined);
    assert.equal(parseResourceUri('ui://Bad Name/view.html'), undefined);
  });

  it("rewrites a tool's view in _meta.ui.resourceUri and the flat key, leaving the rest", () => {
    const meta = { ui: { resourceUri: 'ui://forecast/view.html', visibility: ['model', 'app'] }, other: 1 };
    assert.deepEqual(showAppToolMeta('weather', meta), { ui: { resourceUri: 'ui://weather/forecast/view.html', visibility: ['model', 'app'] }, other: 1 });
    assert.deepEqual(showAppToolMeta('weather', { 'ui/resourceUri': 'ui://v.html' }), { 'ui/resourceUri': 'ui://weather/v.html' });
    const plain = { ui: { resourceUri: 'https://example.com/x' } };
    assert.equal(showAppToolMeta('weather', plain), plain, 'not a view: the same object');
    assert.equal(meta.ui.resourceUri, 'ui://forecast/view.html', 'the input is not changed');
  });

  it('a tool belongs to an app when it names a view or an app may call it', () => {
    assert.equal(isAppTool({ ui: { resourceUri: 'ui://x/y' } }), true);
    assert.equal(isAppTool({ ui: { visibility: ['app'] } }), true);
    assert.equal(isAppTool({ 'ui/resourceUri': 'ui://x' }), true);
    assert.equal(isAppTool({ ui: { visibility: ['model'] } }), false);
    assert.equal(isAppTool({ ui: 'x' }), false);
    assert.equal(isAppTool(undefined), false);
  });
});
