// Runs the whole test suite: a type check, then every *.test.ts under src/ and test/ with
// Node's own test runner (TypeScript through tsx). Arguments narrow the run to paths that
// contain any of them, e.g. `npm test -- src/retrieval` (the type check is then skipped).
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
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

// Sandboxed test plugins run as an unprivileged user (uid 65534) and read fixtures and the
// shared node_modules of this checkout. A checkout inside a private folder (e.g. `mktemp -d`,
// mode 0700) blocks them. As root, the folders above the checkout that are ours and shut to
// others get o+x (enter only, not list), said on the console; otherwise the error says what to do.
function openPathToSandboxUser(folder) {
  const blocked = [];
  for (let dir = folder; ; dir = dirname(dir)) {
    const { mode, uid } = statSync(dir);
    if ((mode & 0o001) === 0) blocked.push({ dir, uid });
    if (dir === dirname(dir)) break;
  }
  if (blocked.length === 0) return;
  const mine = typeof process.getuid === 'function' ? process.getuid() : -1;
  if (mine !== 0 || blocked.some((entry) => entry.uid !== mine)) {
    console.error(`[quiver] sandboxed test plugins (uid 65534) cannot enter ${blocked.map((entry) => entry.dir).join(', ')}: run 'chmod o+x' on them, or clone elsewhere`);
    process.exit(1);
  }
  for (const { dir } of blocked) {
    chmodSync(dir, statSync(dir).mode | 0o001);
    console.log(`[quiver] ${dir}: added o+x (enter only) so sandboxed test plugins can reach this checkout`);
  }
}
openPathToSandboxUser(root.replace(/\/$/, ''));

const concurrency = Math.max(2, Math.min(4, availableParallelism()));
if (!process.env.QUIVER_TEST_DATABASE_URL) {
  console.log('[quiver] QUIVER_TEST_DATABASE_URL is not set: PostgreSQL tests will be skipped (PGlite only)');
}
console.log(`[quiver] running ${files.length} test files, ${concurrency} at a time`);
const durationsFolder = mkdtempSync(join(tmpdir(), 'quiver-test-durations-'));
const durationsLog = join(durationsFolder, 'tests.tsv');
const result = spawnSync(
  process.execPath,
  // --test-force-exit: a test file whose tests have all finished exits even if a failing test left a
  // server or a timer behind (one such file otherwise held CI until its time limit).
  // record-duration appends each file's time to the log that reportSlowestFiles reads.
  [
    '--import', 'tsx', '--import', './test/setup/cheap-embedder.ts', '--import', './test/setup/record-duration.ts',
    '--test', '--test-force-exit', `--test-concurrency=${concurrency}`, '--test-reporter=spec',
    ...files,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, QUIVER_LOG_LEVEL: process.env.QUIVER_LOG_LEVEL ?? 'silent', QUIVER_TEST_DURATIONS_LOG: durationsLog },
  },
);
reportSlowestFiles();
process.exit(result.status ?? 1);

// The suite's time is bounded by CI's limit (.ci/run): the slowest files, after every run, show
// where it goes. QUIVER_TEST_DURATIONS=path also writes every file's seconds there as JSON, to
// compare two runs. Files run concurrently, so their times add up to more than the run's.
// A file that ran twice (never, today) would show its two times added.
function reportSlowestFiles() {
  let lines = [];
  try { lines = readFileSync(durationsLog, 'utf8').split('\n').filter(Boolean); } catch { /* no test finished */ }
  rmSync(durationsFolder, { recursive: true, force: true });
  const secondsByFile = new Map();
  for (const line of lines) {
    const [file, ms] = line.split('\t');
    const name = relative(root, file);
    secondsByFile.set(name, (secondsByFile.get(name) ?? 0) + Number(ms) / 1000);
  }
  if (secondsByFile.size === 0) return;
  const ranked = [...secondsByFile].sort((a, b) => b[1] - a[1]);
  const total = ranked.reduce((sum, [, seconds]) => sum + seconds, 0);
  console.log(`\n[quiver] slowest test files (of ${ranked.length}; ${total.toFixed(0)} s wall time per file, ${concurrency} files at a time):`);
  for (const [file, seconds] of ranked.slice(0, 15)) {
    console.log(`  ${seconds.toFixed(1).padStart(7)} s  ${((100 * seconds) / total).toFixed(1).padStart(5)} %  ${file}`);
  }
  if (process.env.QUIVER_TEST_DURATIONS) {
    writeFileSync(process.env.QUIVER_TEST_DURATIONS, `${JSON.stringify(Object.fromEntries(ranked.map(([file, seconds]) => [file, Number(seconds.toFixed(2))])), null, 1)}\n`);
    console.log(`[quiver] every file's time: ${process.env.QUIVER_TEST_DURATIONS}`);
  }
}
