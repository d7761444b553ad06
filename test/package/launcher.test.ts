/**
 * @module test/package/launcher
 * What `bin/quiver.mjs` runs (bin/entry.mjs): an installed package runs dist/ whatever its
 * file times say; a checkout runs dist/ only while it is fresh, else the sources through tsx;
 * and when neither can run, one line says why (JSON with --json) and the exit code is 1.
 * Each case is a real folder laid out like a package, with a stub `cli/main` whose exit code
 * tells which entry ran; outside this repository tsx cannot be resolved, as for a consumer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const binFolder = fileURLToPath(new URL('../../bin/', import.meta.url));
const DIST_EXIT = 42;

interface Layout {
  dist?: 'fresh' | 'stale';
  sources?: boolean;
}

/** A package folder with the real launcher, an optional dist/ stub and optional sources. */
function packageFolder(layout: Layout): string {
  const root = mkdtempSync(join(tmpdir(), 'quiver-launcher-'));
  cpSync(binFolder, join(root, 'bin'), { recursive: true });
  if (layout.sources) {
    mkdirSync(join(root, 'src/cli'), { recursive: true });
    writeFileSync(join(root, 'src/cli/main.ts'), 'export async function main(): Promise<number> { return 43; }\n');
  }
  if (layout.dist) {
    mkdirSync(join(root, 'dist/cli'), { recursive: true });
    writeFileSync(join(root, 'dist/cli/main.js'), `export async function main(argv) { console.log(JSON.stringify(argv)); return ${DIST_EXIT}; }\n`);
    writeFileSync(join(root, 'dist/.build-stamp'), 'stamp');
    // Fresh: the stamp is newer than every source; stale: older (an edit after the build).
    const at = layout.dist === 'fresh' ? new Date(Date.now() + 60_000) : new Date(Date.now() - 60_000);
    utimesSync(join(root, 'dist/.build-stamp'), at, at);
  }
  return root;
}

function launch(root: string, args: string[]) {
  const result = spawnSync(process.execPath, [join(root, 'bin/quiver.mjs'), ...args], { cwd: root, encoding: 'utf8' });
  rmSync(root, { recursive: true, force: true });
  return result;
}

test('an installed package (no sources) runs dist/ even when its stamp is older than every other file', () => {
  const result = launch(packageFolder({ dist: 'stale' }), ['--version']);
  assert.equal(result.status, DIST_EXIT, result.stderr);
  assert.equal(result.stdout, '["--version"]\n');
});

test('a checkout runs dist/ while the build is newer than the sources', () => {
  const result = launch(packageFolder({ dist: 'fresh', sources: true }), ['serve']);
  assert.equal(result.status, DIST_EXIT, result.stderr);
});

test('a checkout with a stale build and no tsx says what to run, and exits 1', () => {
  const result = launch(packageFolder({ dist: 'stale', sources: true }), ['--version']);
  assert.equal(result.status, 1);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr, 'quiver: dist/ is missing or older than src/, and tsx (a devDependency) is not installed: run `npm install` or `npm run build`\n');
});

test('an installation with neither a build nor sources says so, as one JSON line with --json', () => {
  const plain = launch(packageFolder({}), ['--version']);
  assert.equal(plain.status, 1);
  assert.match(plain.stderr, /^quiver: this installation has neither a compiled build \(.*dist\/\.build-stamp is missing\) nor sources: reinstall the quiver package\n$/);

  const json = launch(packageFolder({}), ['plugin', 'list', '--json']);
  assert.equal(json.status, 1);
  const lines = json.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1);
  const parsed = JSON.parse(lines[0]!) as { error: { code: string; message: string } };
  assert.equal(parsed.error.code, 'internal');
  assert.match(parsed.error.message, /neither a compiled build .* nor sources/);
});
