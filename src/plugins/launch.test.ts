import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveLaunch } from './launch.ts';

describe('resolveLaunch', () => {
  it('prefers quiver.json launch, then bin, then main; relative to the cache folder', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'quiver-launch-'));
    try {
      const packageFolder = join(folder, 'node_modules/@acme/x');
      mkdirSync(join(packageFolder, 'sub'), { recursive: true });
      writeFileSync(join(packageFolder, 'cli.js'), '#!/usr/bin/env node\n');
      writeFileSync(join(packageFolder, 'server'), '#!/bin/sh\nexec true\n');
      const base = { root: folder, relativeFolder: 'node_modules/@acme/x' };
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

describe('resolveLaunch keeps the launch inside the plugin folder', () => {
  it('refuses an entry point, command, working folder or shipped argument that links or leads out of it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-launch-'));
    const host = mkdtempSync(join(tmpdir(), 'quiver-host-'));
    try {
      writeFileSync(join(host, 'outside.js'), '#!/usr/bin/env node\nconsole.log("host")\n');
      writeFileSync(join(root, 'inner.js'), 'console.log("inner")\n');
      symlinkSync(join(host, 'outside.js'), join(root, 'entry.js'));
      symlinkSync(join(host, 'outside.js'), join(root, 'run'));
      symlinkSync('inner.js', join(root, 'alias.js'));
      symlinkSync(host, join(root, 'hostdir'));
      const base = { root, relativeFolder: '.' };
      // A link inside the folder is fine.
      assert.deepEqual(await resolveLaunch({ ...base, packageJson: { main: 'alias.js' } }), { transport: 'stdio', command: 'node', args: ['alias.js'], env: [], cwd: '.' });
      await assert.rejects(resolveLaunch({ ...base, packageJson: { main: 'entry.js' } }), /argument 'entry.js' leads outside the plugin's folder/);
      await assert.rejects(resolveLaunch({ ...base, packageJson: { bin: 'run' } }), /leads outside the plugin's folder/);
      await assert.rejects(resolveLaunch({ ...base, launch: { transport: 'stdio', command: './run' } }), /command leads outside/);
      await assert.rejects(resolveLaunch({ ...base, launch: { transport: 'stdio', command: 'node', cwd: 'hostdir', args: ['x.js'] } }), /working folder leads outside/);
      await assert.rejects(resolveLaunch({ ...base, launch: { transport: 'stdio', command: 'node', cwd: '../..' } }), /working folder leads outside/);
      await assert.rejects(resolveLaunch({ ...base, launch: { transport: 'stdio', command: 'node', args: ['hostdir/outside.js'] } }), /argument 'hostdir\/outside.js'/);
      // Arguments the admin adds are not the plugin's: an absolute folder to serve is kept as given.
      assert.deepEqual(await resolveLaunch({ ...base, packageJson: { main: 'inner.js' }, extraArgs: ['/usr/share', '../elsewhere'] }), {
        transport: 'stdio', command: 'node', args: ['inner.js', '/usr/share', '../elsewhere'], env: [], cwd: '.',
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(host, { recursive: true, force: true });
    }
  });
});
