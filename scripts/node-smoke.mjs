#!/usr/bin/env node
// Runs a smoke subset of the test suite on each maintained Node LTS line Quiver supports
// (issue #28: 22 and 24, the lines of package.json "engines"), whatever Node runs this script.
// Each Node comes from the npm registry's `node-<platform>-<arch>` package, fetched with npm
// and unpacked once into a cache folder ($QUIVER_NODE_CACHE, default
// $TMPDIR/quiver-node-cache); the tests run with it through tsx, as `npm test` runs them.
// The subset is short on purpose (a minute or two per line): the layer and cycle rule, the
// pure core, the CLI in process, a real `quiver serve` and a forwarded command
// (light-start), the session store on PGlite (and PostgreSQL when
// QUIVER_TEST_DATABASE_URL is set), and sandboxed Node processes (bubblewrap).
// Usage: node scripts/node-smoke.mjs [--line 22] [--line 24]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The exact Node of each supported line (bump with the LTS releases). */
const NODE_LINES = { 22: '22.23.3', 24: '24.21.0' };

const SMOKE_TESTS = [
  'test/layers.test.ts',
  ...readdirSync(fileURLToPath(new URL('../src/core/', import.meta.url))).filter((name) => name.endsWith('.test.ts')).map((name) => `src/core/${name}`),
  'test/cli/help.test.ts',
  'test/cli/light-start.test.ts',
  // The launcher's re-exec with glibc allocator settings happens only where process.execve exists.
  'test/package/serve-tuning.test.ts',
  'test/sessions/embedded-events.test.ts',
  // Sandboxed Node processes run by this Node, from its cache folder under $TMPDIR: a program
  // under /tmp must be bound into the sandbox's own /tmp (it was not, until 2026-11-29).
  'src/runtime/sandbox.test.ts',
  'src/runtime/sandbox-egress.test.ts',
];

const repo = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { line: { type: 'string', multiple: true } } });
const lines = values.line ?? Object.keys(NODE_LINES);
const cache = resolve(process.env.QUIVER_NODE_CACHE ?? join(tmpdir(), 'quiver-node-cache'));

/** Node `version` from the npm registry, unpacked once; the path of its binary. */
function ensureNode(version) {
  const folder = join(cache, `node-${version}`);
  const bin = join(folder, 'package', 'bin', 'node');
  if (existsSync(bin)) return bin;
  // Filled in a sibling and renamed: an interrupted fetch leaves no half cache.
  const partial = `${folder}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    const packageName = `node-${process.platform}-${process.arch}@${version}`;
    const tarball = execFileSync('npm', ['pack', packageName, '--silent', '--pack-destination', partial], { encoding: 'utf8' }).trim().split('\n').pop();
    execFileSync('tar', ['-xzf', join(partial, tarball), '-C', partial]);
    rmSync(join(partial, tarball));
    renameSync(partial, folder);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  if (!existsSync(bin)) throw new Error(`node-${process.platform}-${process.arch}@${version} holds no bin/node`);
  return bin;
}

let failed = 0;
for (const line of lines) {
  const version = NODE_LINES[line];
  if (!version) {
    console.error(`[quiver] node-smoke: unknown line ${line} (known: ${Object.keys(NODE_LINES).join(', ')})`);
    process.exit(2);
  }
  const node = ensureNode(version);
  const reported = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  if (reported !== `v${version}`) throw new Error(`${node} reports ${reported}, expected v${version}`);
  console.log(`[quiver] node-smoke: ${SMOKE_TESTS.length} test files on Node ${reported}`);
  const result = spawnSync(
    node,
    ['--import', 'tsx', '--import', './test/setup/cheap-embedder.ts', '--test', '--test-force-exit', '--test-concurrency=2', '--test-reporter=dot', ...SMOKE_TESTS],
    { cwd: repo, stdio: 'inherit', env: { ...process.env, QUIVER_LOG_LEVEL: process.env.QUIVER_LOG_LEVEL ?? 'silent' } },
  );
  if (result.status !== 0) {
    failed++;
    console.error(`[quiver] node-smoke: Node ${reported} failed (exit ${result.status ?? result.signal})`);
  }
}
process.exit(failed === 0 ? 0 : 1);
