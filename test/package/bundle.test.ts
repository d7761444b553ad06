/**
 * The CLI's bundle (issue #28, scripts/bundle-cli.mjs) starts on its own: bundled into a folder
 * laid out as an installed package (no sources, no per-file build of the CLI, only the files
 * the build copies beside it), `quiver --help` runs, `quiver serve` becomes ready and a command
 * forwarded to it answers. The per-file build is absent there, so a bundle file reaching for a
 * module by a path that only that build has fails this test.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runNode as run, stopChild } from '../helpers/cli.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const RECORDER = fileURLToPath(new URL('../helpers/module-recorder.mjs', import.meta.url));

describe('the bundled CLI', { timeout: 900_000 }, () => {
  let folder: string;
  let root: string;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'quiver-bundle-'));
    root = join(folder, 'package');
    mkdirSync(root);
    // The sources to bundle, removed afterwards: without src/ the launcher runs dist/ as an installed package does.
    cpSync(join(repo, 'src'), join(root, 'src'), { recursive: true });
    for (const name of ['bin', 'package.json']) cpSync(join(repo, name), join(root, name), { recursive: true });
    for (const name of ['node_modules', 'models', 'bench']) symlinkSync(join(repo, name), join(root, name));
    const { copyRuntimeAssets } = (await import(pathToFileURL(join(repo, 'scripts/runtime-assets.mjs')).href)) as { copyRuntimeAssets(root: string): void };
    copyRuntimeAssets(root);
    // The checkout's PGlite template, when its build made one (a new store then skips initdb, minutes on a loaded machine; a stale one is ignored).
    for (const name of ['pglite-template.tar.gz', 'pglite-template.json']) {
      if (existsSync(join(repo, 'dist/store', name))) cpSync(join(repo, 'dist/store', name), join(root, 'dist/store', name));
    }
    const { bundleCli } = (await import(pathToFileURL(join(repo, 'scripts/bundle-cli.mjs')).href)) as { bundleCli(root: string): Promise<number> };
    await bundleCli(root);
    writeFileSync(join(root, 'dist/.build-stamp'), new Date().toISOString());
    rmSync(join(root, 'src'), { recursive: true });
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('quiver --help runs from dist/bundle/cli.js', async () => {
    const log = join(folder, 'help-modules.txt');
    const help = await run(['--import', RECORDER, join(root, 'bin/quiver.mjs'), '--help'], { QUIVER_HOME: join(folder, 'home'), QUIVER_TEST_MODULE_LOG: log });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^ {2}serve /m);
    const modules = readFileSync(log, 'utf8').split('\n');
    assert.ok(modules.includes(pathToFileURL(join(root, 'dist/bundle/cli.js')).href), 'the launcher did not start the bundle');
    // modules.json maps the bundle back to the modules it holds (the light-start test reads them).
    assert.ok(modules.includes(pathToFileURL(join(root, 'dist/cli/run-cli.js')).href), 'the bundle\'s modules were not listed');
  });

  it('quiver serve from the bundle becomes ready, and a forwarded command answers', async () => {
    const env = { QUIVER_HOME: join(folder, 'home'), QUIVER_DATA_DIR: join(folder, 'data') };
    const child = spawn(process.execPath, [join(root, 'bin/quiver.mjs'), 'serve', '--json', '--http', '127.0.0.1:0'], {
      env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const url = await new Promise<string>((resolve, reject) => {
        let stdout = '';
        child.stdout.on('data', (chunk) => {
          stdout += chunk;
          const line = stdout.split('\n').find((text) => text.startsWith('{'));
          if (line) resolve((JSON.parse(line) as { url: string }).url);
        });
        child.on('close', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
      });
      const ready = await fetch(`${url}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
      const listed = await run([join(root, 'bin/quiver.mjs'), 'plugin', 'list', '--json'], env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(JSON.parse(listed.stdout), { plugins: [] });
    } finally {
      await stopChild(child);
    }
  });
});
