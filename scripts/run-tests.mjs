// Runs the whole test suite: a type check, then every *.test.ts under src/ and test/ with
// Node's own test runner (TypeScript through tsx). Arguments narrow the run to paths that
// contain any of them, e.g. `npm test -- src/retrieval` (the type check is then skipped).
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function findTests(directory) {
  const found = [];
  for (const entry of readdirSync(directory)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (entry.endsWith('.test.ts')) found.push(relative(root, path));
  }
  return found;
}

const files = ['src', 'test', 'bench']
  .flatMap((dir) => { try { return findTests(join(root, dir)); } catch { return []; } })
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();

if (filters.length === 0) {
  console.log('[quiver] type check (tsc --noEmit)');
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--noEmit'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}

if (files.length === 0) {
  console.error('[quiver] no test files matched');
  process.exit(1);
}

const concurrency = Math.max(2, Math.min(4, availableParallelism()));
if (!process.env.QUIVER_TEST_DATABASE_URL) {
  console.log('[quiver] QUIVER_TEST_DATABASE_URL is not set: PostgreSQL tests will be skipped (PGlite only)');
}
console.log(`[quiver] running ${files.length} test files, ${concurrency} at a time`);
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, QUIVER_LOG_LEVEL: process.env.QUIVER_LOG_LEVEL ?? 'silent' } },
);
process.exit(result.status ?? 1);
