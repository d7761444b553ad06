import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isQuiverError } from '../core/errors.ts';
import { defaultNameHint, parsePluginSource } from './sources.ts';

describe('parsePluginSource', () => {
  it('reads prefixes, git URLs and remote endpoints', () => {
    assert.deepEqual(parsePluginSource('npm:@modelcontextprotocol/server-memory@1.2.3'), { kind: 'npm', spec: '@modelcontextprotocol/server-memory@1.2.3' });
    assert.deepEqual(parsePluginSource('market:io.github.user/weather'), { kind: 'market', name: 'io.github.user/weather' });
    assert.deepEqual(parsePluginSource('git+https://example.com/x/y'), { kind: 'git', url: 'https://example.com/x/y' });
    assert.deepEqual(parsePluginSource('https://github.com/owner/repo'), { kind: 'git', url: 'https://github.com/owner/repo' });
    assert.deepEqual(parsePluginSource('https://example.com/tools.git'), { kind: 'git', url: 'https://example.com/tools.git' });
    assert.deepEqual(parsePluginSource('git@github.com:owner/repo.git'), { kind: 'git', url: 'git@github.com:owner/repo.git' });
    assert.deepEqual(parsePluginSource('file:///srv/repo.git'), { kind: 'git', url: 'file:///srv/repo.git' });
    assert.deepEqual(parsePluginSource('https://mcp.example.com/mcp'), { kind: 'url', url: 'https://mcp.example.com/mcp' });
    assert.deepEqual(parsePluginSource('https://github.com/owner/repo/issues'), { kind: 'url', url: 'https://github.com/owner/repo/issues' });
  });

  it('tells a bare repository from a plain folder, and refuses the rest', () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-sources-'));
    try {
      const bare = join(root, 'repo.git');
      mkdirSync(join(bare, 'objects'), { recursive: true });
      mkdirSync(join(bare, 'refs'), { recursive: true });
      writeFileSync(join(bare, 'HEAD'), 'ref: refs/heads/main\n');
      const folder = join(root, 'plugin');
      mkdirSync(folder);
      writeFileSync(join(root, 'file.txt'), 'x');
      assert.deepEqual(parsePluginSource(bare), { kind: 'git', url: bare });
      assert.deepEqual(parsePluginSource('plugin', root), { kind: 'path', path: folder });
      assert.deepEqual(parsePluginSource(`path:${bare}`), { kind: 'path', path: bare });
      for (const bad of ['', 'npm:', '--upload-pack=evil', 'npm:--global', join(root, 'missing'), join(root, 'file.txt'), 'https://']) {
        assert.throws(() => parsePluginSource(bad, root), (error: Error) => isQuiverError(error, 'invalid_input'), bad);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('derives a default name hint per kind', () => {
    assert.equal(defaultNameHint({ kind: 'npm', spec: '@modelcontextprotocol/server-memory@^1' }), 'server-memory');
    assert.equal(defaultNameHint({ kind: 'npm', spec: 'left-pad' }), 'left-pad');
    assert.equal(defaultNameHint({ kind: 'git', url: 'https://github.com/acme/weather-mcp.git' }), 'weather-mcp');
    assert.equal(defaultNameHint({ kind: 'git', url: '/srv/remotes/calc.git/' }), 'calc');
    assert.equal(defaultNameHint({ kind: 'url', url: 'https://mcp.example.com/mcp' }), 'mcp.example.com');
    assert.equal(defaultNameHint({ kind: 'market', name: 'io.github.user/weather' }), 'weather');
  });
});
