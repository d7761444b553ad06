import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveLaunch } from './launch.ts';

describe('resolveLaunch', () => {
  it('prefers quiver.json launch, then bin, then main; relative to the cache folder', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'quiver-launch-'));
    try {
      writeFileSync(join(folder, 'cli.js'), '#!/usr/bin/env node\n');
      writeFileSync(join(folder, 'server'), '#!/bin/sh\nexec true\n');
      const base = { pluginFolder: folder, relativeFolder: 'node_modules/@acme/x' };
      assert.deepEqual(await resolveLaunch({ ...base, launch: { command: 'uvx', args: ['acme-mcp'], env: ['TOKEN'], transport: 'stdio', cwd: 'sub' }, extraArgs: ['--ro'] }), {
        transport: 'stdio', command: 'uvx', args: ['acme-mcp', '--ro'], env: ['TOKEN'], cwd: 'node_modules/@acme/x/sub',
      });
      assert.deepEqual(await resolveLaunch({ ...base, launch: { transport: 'http', url: 'https://x.example/mcp' } }), { transport: 'http', url: 'https://x.example/mcp' });
      assert.deepEqual(await resolveLaunch({ ...base, packageJson: { name: '@acme/x', bin: { x: 'cli.js' } } }), {
        transport: 'stdio', command: 'node', args: ['cli.js'], env: [], cwd: 'node_modules/@acme/x',
      });
      assert.deepEqual(await resolveLaunch({ ...base, packageJson: { name: '@acme/x', bin: { other: 'server', x: 'cli.js' } }, binName: 'other' }), {
        transport: 'stdio', command: './server', args: [], env: [], cwd: 'node_modules/@acme/x',
      });
      await assert.rejects(resolveLaunch({ ...base, packageJson: { name: '@acme/x', bin: { a: 'cli.js', b: 'server' } } }), /several bin entries \(a, b\); choose one with --bin/);
      assert.deepEqual(await resolveLaunch({ ...base, packageJson: { main: 'index.js' } }), { transport: 'stdio', command: 'node', args: ['index.js'], env: [], cwd: 'node_modules/@acme/x' });
      await assert.rejects(resolveLaunch({ ...base, packageJson: { main: '../../evil.js' } }), /outside the package/);
      await assert.rejects(resolveLaunch({ ...base, packageJson: { name: 'x' } }), /neither "bin" nor "main"/);
      await assert.rejects(resolveLaunch(base), /no package.json with "bin" or "main"/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
