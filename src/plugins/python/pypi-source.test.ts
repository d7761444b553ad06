/**
 * `pypi:` sources (issue #26): a name, optionally pinned (`==` as pip writes it, `@` as uvx
 * does), becomes a requirement pip is handed after `--`; anything else — options, URLs, extras,
 * markers, version ranges — is refused with the accepted forms, before pip ever runs.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../../core/errors.ts';
import { defaultNameHint, parsePluginSource } from '../sources.ts';

describe('pypi: sources', () => {
  it('reads a name, a pinned name (== and @) and trims around them', () => {
    assert.deepEqual(parsePluginSource('pypi:mcp-server-time'), { kind: 'pypi', requirement: 'mcp-server-time', name: 'mcp-server-time' });
    assert.deepEqual(parsePluginSource('pypi:mcp-server-time==2025.1.0'), { kind: 'pypi', requirement: 'mcp-server-time==2025.1.0', name: 'mcp-server-time' });
    assert.deepEqual(parsePluginSource('pypi:mcp_server.time@1.0rc1'), { kind: 'pypi', requirement: 'mcp_server.time==1.0rc1', name: 'mcp_server.time' });
    assert.deepEqual(parsePluginSource('  pypi: Py-Echo==1.0.0+local.1 '), { kind: 'pypi', requirement: 'Py-Echo==1.0.0+local.1', name: 'Py-Echo' });
    assert.deepEqual(parsePluginSource('pypi:x==1!2.0.post1'), { kind: 'pypi', requirement: 'x==1!2.0.post1', name: 'x' });
  });

  it('names the plugin after the package', () => {
    assert.equal(defaultNameHint(parsePluginSource('pypi:mcp-server-fetch==2025.4.7')), 'mcp-server-fetch');
  });

  it('refuses what pip would read as something else: options, URLs, extras, markers, ranges, empty parts', () => {
    const refused = [
      'pypi:', 'pypi:--index-url=https://evil.example/simple', 'pypi:-e', 'pypi:name==', 'pypi:==1.0', 'pypi:name===1.0',
      'pypi:name>=1.0', 'pypi:name[cli]', 'pypi:name==1.0;python_version<"4"', 'pypi:name @ https://evil.example/x.whl',
      'pypi:https://evil.example/x.whl', 'pypi:name==1.0 --extra-index-url=x', 'pypi:name-', 'pypi:-name', 'pypi:name@--pre', 'pypi:na me',
    ];
    for (const source of refused) {
      assert.throws(() => parsePluginSource(source), (error: unknown) => {
        assert.ok(isQuiverError(error), `${source}: ${String(error)}`);
        assert.equal(error.code, 'invalid_input');
        assert.match(error.message, /use pypi:NAME or pypi:NAME==VERSION/);
        return true;
      }, source);
    }
  });
});
