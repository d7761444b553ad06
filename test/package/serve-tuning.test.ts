/**
 * @module test/package/serve-tuning
 * `quiver serve` re-executes itself with glibc allocator settings and a one-thread V8 worker
 * pool (issue #28, bin/serve-tuning.mjs) where Node has process.execve (22.15+), and does
 * nothing on Node 20.
 * The decision is pure and tested as such; the launcher is run for real, in a package-like
 * folder with a stub CLI that reports its environment, pid and standard input, and a real
 * `quiver serve --stdio` answers an MCP client with the settings in its environment and the
 * pool size on its command line. Each case
 * asserts what the Node running it must do, so the file means something on 20, 22 and 24
 * (scripts/node-smoke.mjs runs it on 22 and 24).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVE_GLIBC_TUNABLES, SERVE_V8_POOL_SIZE, serveTuning } from '../../bin/serve-tuning.mjs';

const binFolder = fileURLToPath(new URL('../../bin/', import.meta.url));
const canExecve = typeof (process as { execve?: unknown }).execve === 'function';
const onLinux = process.platform === 'linux';
/** What this Node must do for `quiver serve`: re-execute with the settings, or run as it is. */
const expectTuning = canExecve && onLinux;

const POOL = `--v8-pool-size=${SERVE_V8_POOL_SIZE}`;

test('the decision: serve only, on a Node with execve; the allocator unless GLIBC_TUNABLES is set or QUIVER_MALLOC_TUNING=0', () => {
  const host = { canExecve: true, platform: 'linux' };
  assert.deepEqual(serveTuning(['serve', '--stdio'], { PATH: '/bin' }, [], host), { env: { PATH: '/bin', GLIBC_TUNABLES: SERVE_GLIBC_TUNABLES }, execArgv: [POOL] });
  assert.deepEqual(serveTuning(['--json', 'serve'], {}, ['--enable-source-maps'], host), { env: { GLIBC_TUNABLES: SERVE_GLIBC_TUNABLES }, execArgv: ['--enable-source-maps', POOL] });
  assert.equal(serveTuning(['serve'], {}, [], { canExecve: false, platform: 'linux' }), undefined, 'Node 20: nothing');
  assert.equal(serveTuning(['serve'], {}, [], { canExecve: true, platform: 'darwin' }), undefined, 'not glibc');
  assert.deepEqual(serveTuning(['serve'], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=1' }, [], host), { env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=1' }, execArgv: [POOL] }, "the operator's own allocator settings stay");
  assert.deepEqual(serveTuning(['serve'], { QUIVER_MALLOC_TUNING: '0' }, [], host), { env: { QUIVER_MALLOC_TUNING: '0' }, execArgv: [POOL] }, 'allocator opted out');
  assert.equal(serveTuning(['plugin', 'list'], {}, [], host), undefined, 'a short command');
  assert.equal(serveTuning([], {}, [], host), undefined);
});

test('the allocator settings map every block of 32 KiB or more (V8 compile-zone segments are returned when freed)', () => {
  // Issue #28: with 128 KiB, TurboFan's zone segments (at most 32 KiB) for PGlite's hot functions
  // stayed in the arena after they were freed, 35-40 MB of an idle server (docs/engineering.md).
  const settings = new Map(SERVE_GLIBC_TUNABLES.split(':').map((entry) => entry.split('=') as [string, string]));
  assert.ok(Number(settings.get('glibc.malloc.mmap_threshold')) <= 32 * 1024, SERVE_GLIBC_TUNABLES);
  assert.equal(settings.get('glibc.malloc.arena_max'), '2');
  assert.equal(settings.get('glibc.malloc.trim_threshold'), '131072');
});

test('the decision: the V8 pool size, its variable, the operator\'s own flag, and the re-executed process', () => {
  const host = { canExecve: true, platform: 'linux' };
  const tuned = { GLIBC_TUNABLES: SERVE_GLIBC_TUNABLES };
  assert.equal(serveTuning(['serve'], tuned, [POOL], host), undefined, 'the re-executed process runs as it is');
  assert.deepEqual(serveTuning(['serve'], { ...tuned, QUIVER_V8_POOL_SIZE: '3' }, [], host)?.execArgv, ['--v8-pool-size=3']);
  assert.equal(serveTuning(['serve'], { ...tuned, QUIVER_V8_POOL_SIZE: '0' }, [], host), undefined, "0: V8's default, nothing to change");
  assert.equal(serveTuning(['serve'], tuned, ['--v8-pool-size', '6'], host), undefined, "node's own option stays");
  assert.equal(serveTuning(['serve'], { ...tuned, NODE_OPTIONS: '--max-old-space-size=512 --v8-pool-size=2' }, [], host), undefined, 'NODE_OPTIONS stays');
  for (const bad of ['-1', 'four', '65', '1.5']) {
    const decision = serveTuning(['serve'], { ...tuned, QUIVER_V8_POOL_SIZE: bad }, [], host);
    assert.deepEqual(decision?.execArgv, [POOL], bad);
    assert.match(decision?.warning ?? '', /QUIVER_V8_POOL_SIZE must be a whole number from 0 to 64/);
  }
});

/** A package folder with the real launcher and a stub CLI printing its tunables, pid and stdin. */
function stubPackage(): string {
  const root = mkdtempSync(join(tmpdir(), 'quiver-tuning-'));
  cpSync(binFolder, join(root, 'bin'), { recursive: true });
  mkdirSync(join(root, 'dist/cli'), { recursive: true });
  writeFileSync(
    join(root, 'dist/cli/main.js'),
    `import { readFileSync } from 'node:fs';
export async function main() {
  console.log(JSON.stringify({ tunables: process.env.GLIBC_TUNABLES ?? null, execArgv: process.execArgv, pid: process.pid, stdin: readFileSync(0, 'utf8') }));
  return 0;
}
`,
  );
  writeFileSync(join(root, 'dist/.build-stamp'), 'stamp');
  return root;
}

function runStub(args: string[], env: Record<string, string> = {}) {
  const root = stubPackage();
  try {
    const { GLIBC_TUNABLES: _ignored, QUIVER_MALLOC_TUNING: _also, QUIVER_V8_POOL_SIZE: _pool, NODE_OPTIONS: _options, ...base } = process.env;
    const result = spawnSync(process.execPath, [join(root, 'bin/quiver.mjs'), ...args], { cwd: root, encoding: 'utf8', input: 'from the client\n', env: { ...base, ...env } });
    assert.equal(result.status, 0, result.stderr);
    return { spawnedPid: result.pid, ...(JSON.parse(result.stdout) as { tunables: string | null; execArgv: string[]; pid: number; stdin: string }) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test(`the launcher ${expectTuning ? 're-executes serve with the settings, same pid and stdin' : 'runs serve as it is (no process.execve on this Node)'}`, () => {
  const serve = runStub(['serve', '--stdio']);
  assert.equal(serve.tunables, expectTuning ? SERVE_GLIBC_TUNABLES : null);
  assert.deepEqual(serve.execArgv, expectTuning ? [POOL] : []);
  assert.equal(serve.pid, serve.spawnedPid, 'the process spawned is the one that ran the CLI (execve, not a child)');
  assert.equal(serve.stdin, 'from the client\n', 'standard input reaches the CLI');
  assert.equal(runStub(['serve'], { QUIVER_MALLOC_TUNING: '0' }).tunables, null);
  assert.deepEqual(runStub(['serve'], { QUIVER_V8_POOL_SIZE: '0' }).execArgv, []);
  assert.equal(runStub(['serve'], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=1' }).tunables, 'glibc.malloc.arena_max=1');
  assert.equal(runStub(['plugin', 'list']).tunables, null);
  assert.deepEqual(runStub(['plugin', 'list']).execArgv, []);
});

test(`a real quiver serve --stdio answers initialize ${expectTuning ? 'with the settings in its environment and command line' : 'unchanged on this Node'}`, { timeout: 120_000 }, async () => {
  const folder = mkdtempSync(join(tmpdir(), 'quiver-tuning-serve-'));
  const { GLIBC_TUNABLES: _ignored, QUIVER_MALLOC_TUNING: _also, QUIVER_V8_POOL_SIZE: _pool, NODE_OPTIONS: _options, ...base } = process.env;
  const child = spawn(process.execPath, [join(binFolder, 'quiver.mjs'), 'serve', '--stdio', '--data', join(folder, 'data')], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...base, QUIVER_HOME: join(folder, 'home'), QUIVER_LOG_LEVEL: 'silent' },
  });
  try {
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const answered = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        const line = stdout.split('\n').find((text) => text.includes('"id":1'));
        if (line) resolve(line);
      });
      child.once('close', (code) => reject(new Error(`serve --stdio exited with ${code}: ${stderr.slice(-1000)}`)));
    });
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'serve-tuning-test', version: '1' } } };
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    const answer = JSON.parse(await answered) as { result?: { serverInfo?: { name?: string } } };
    assert.equal(answer.result?.serverInfo?.name, 'quiver');
    // /proc shows the environment the process was started with (glibc 2.36 cuts the variable at its
    // first ':' there while parsing it; the process's own copy is whole), so the prefix is compared.
    if (!onLinux) return;
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    assert.equal(environ.some((entry) => entry.startsWith('GLIBC_TUNABLES=glibc.malloc.')), expectTuning, environ.filter((entry) => entry.startsWith('GLIBC')).join(' '));
    const commandLine = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
    assert.equal(commandLine.includes(POOL), expectTuning, commandLine.join(' '));
  } finally {
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.stdin.end();
    child.kill('SIGTERM');
    await closed;
    rmSync(folder, { recursive: true, force: true });
  }
});
