#!/usr/bin/env node
// The MCP conformance suite's server scenarios against `quiver serve` (issue #12).
//
// Fetches Node 22 (the suite needs it; Quiver runs on 20) and @modelcontextprotocol/conformance
// from the npm registry into a cache folder (once; later runs reuse it), installs Quiver's own
// test plugin (test/fixtures/conformance-plugin, its SDK dependency from the registry) into a
// fresh temporary home with its 2026-era twin (test/fixtures/conformance-modern-plugin, the
// input-required scenarios' tools on the v2 SDK), sets the default workspace to exposure `all` with native names (the
// suite calls the reference server's names unprefixed), creates an `mcp` key and serves HTTP
// on loopback. The suite's client cannot send headers, so a loopback-only proxy in this script
// adds the key to every request: Quiver's /mcp keeps requiring its key, nothing is fenced off.
// Issue #24: the suite (0.2.0-alpha.12) runs the scenarios each protocol revision requires
// (`--requirements 2025-11-25` and `--requirements 2026-07-28`, both by default) against the same
// endpoint, which answers both eras. Node 22 runs the suite only; Quiver runs on the Node that
// runs this script.
// Prints one line per scenario (pass / FAIL and each failed check's reason) and compares with
// the baseline of expected failures (one `server-<revision>:` list per revision): a new failure
// or an unexpected pass exits 1.
//
// --defaults leaves the workspace at Quiver's defaults (exposure `search`, prefixed names), to
// measure what a default install scores; the baseline comparison is skipped then.
//
// Usage: node scripts/conformance.mjs [--baseline FILE] [--revision REV]... [--scenario NAME]... [--cache DIR] [--defaults]
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const NODE_VERSION = '22.12.0';
const SUITE_VERSION = '0.2.0-alpha.12';
const REVISIONS = ['2025-11-25', '2026-07-28'];
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const quiverBin = join(repo, 'bin', 'quiver.mjs');

const { values } = parseArgs({
  options: {
    baseline: { type: 'string', default: join(repo, 'test', 'conformance', 'expected-failures.yml') },
    scenario: { type: 'string', multiple: true },
    revision: { type: 'string', multiple: true },
    cache: { type: 'string', default: process.env.QUIVER_CONFORMANCE_CACHE ?? join(tmpdir(), 'quiver-conformance-cache') },
    defaults: { type: 'boolean', default: false },
  },
});
const cache = resolve(values.cache);

/** Runs a command to completion; throws with its output when it fails. */
function run(command, args, options = {}) {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024, ...options });
}

/** Fills `folder` through `fill(tmp)` in a fresh sibling, then renames it: an interrupted fetch leaves no half cache. */
function fillOnce(folder, fill) {
  const tmp = `${folder}.partial-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    fill(tmp);
    renameSync(tmp, folder);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Node 22 from the npm registry's `node-<platform>-<arch>` package, unpacked once. */
function ensureNode22() {
  const folder = join(cache, `node-${NODE_VERSION}`);
  const bin = join(folder, 'package', 'bin', 'node');
  if (existsSync(bin)) return bin;
  fillOnce(folder, (tmp) => {
    const tarball = run('npm', ['pack', `node-${process.platform}-${process.arch}@${NODE_VERSION}`, '--silent', '--pack-destination', tmp]).trim().split('\n').pop();
    run('tar', ['-xzf', join(tmp, tarball), '-C', tmp]);
    rmSync(join(tmp, tarball));
  });
  if (!existsSync(bin)) throw new Error(`node-${process.platform}-${process.arch}@${NODE_VERSION} holds no bin/node`);
  return bin;
}

/** The conformance suite from the npm registry, installed once. */
function ensureSuite() {
  const folder = join(cache, `conformance-${SUITE_VERSION}`);
  const entry = join(folder, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  if (existsSync(entry)) return entry;
  fillOnce(folder, (tmp) => {
    writeFileSync(join(tmp, 'package.json'), '{ "private": true }\n');
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `@modelcontextprotocol/conformance@${SUITE_VERSION}`], { cwd: tmp });
  });
  return entry;
}

/** A test plugin with its dependencies, refreshed from the repository (dependencies installed once). */
function ensurePlugin(name, marker) {
  const source = join(repo, 'test', 'fixtures', name);
  const folder = join(cache, name);
  mkdirSync(folder, { recursive: true });
  for (const file of readdirSync(source)) cpSync(join(source, file), join(folder, file));
  if (!existsSync(join(folder, 'node_modules', ...marker.split('/')))) {
    run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'], { cwd: folder });
  }
  // The sandboxed plugin user must reach and read the folder.
  for (let path = folder; path !== dirname(path); path = dirname(path)) {
    if (path === dirname(cache)) break;
    chmodSync(path, 0o755);
  }
  return folder;
}

/** `quiver …` against the temporary home. */
function quiver(env, args) {
  return run(process.execPath, [quiverBin, ...args], { env: { ...process.env, ...env } });
}

/** Starts `quiver serve --http 127.0.0.1:0` and resolves with its URL once it listens. */
function startServe(env) {
  return new Promise((resolveStart, reject) => {
    const child = spawn(process.execPath, [quiverBin, 'serve', '--json', '--http', '127.0.0.1:0'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n').find((l) => l.startsWith('{') && l.includes('"url"'));
      if (line) resolveStart({ child, url: JSON.parse(line).url });
    });
    child.once('exit', (code) => reject(new Error(`quiver serve exited with ${code}: ${stderr}`)));
  });
}

/** A loopback proxy that adds the key to each request (the suite's client sends no headers); streams both ways. */
function startKeyProxy(target, key) {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(error));
    });
    req.pipe(forwarded);
  });
  return new Promise((resolveListen) => server.listen(0, '127.0.0.1', () => resolveListen(server)));
}

/** The baseline of one revision: scenario → reason, from `server-<revision>:` entries `  - name  # reason`. */
function readBaseline(file, revision) {
  const expected = new Map();
  if (!existsSync(file)) return expected;
  let inSection = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\S/.test(line)) inSection = line.startsWith(`server-${revision}:`);
    const item = /^\s+-\s+([\w/-]+)\s*(?:#\s*(.*))?$/.exec(line);
    if (inSection && item) expected.set(item[1], item[2] ?? '');
  }
  return expected;
}

/** The server scenarios a revision requires (frozen at its release). */
function listScenarios(node, suite, revision) {
  const out = run(node, [suite, 'list', '--server', '--requirements', revision]);
  const server = out.split(/Client scenarios/)[0];
  return [...server.matchAll(/^\s+-\s+([\w/-]+)/gm)].map((match) => match[1]);
}

/** Runs one scenario; its failed checks (id and reason), read from the suite's checks.json. */
async function runScenario(node, suite, url, revision, scenario, outDir) {
  const dir = join(outDir, revision, scenario);
  await new Promise((resolveRun) => {
    const child = spawn(node, [suite, 'server', '--url', url, '--scenario', scenario, '--spec-version', revision, '-o', dir], { stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolveRun();
    });
  });
  const files = existsSync(dir) ? findFiles(dir, 'checks.json') : [];
  if (files.length === 0) return [{ id: scenario, reason: 'the suite wrote no results (crashed or timed out)' }];
  const checks = JSON.parse(readFileSync(files[0], 'utf8'));
  return checks.filter((check) => check.status === 'FAILURE').map((check) => ({ id: check.id, reason: check.errorMessage ?? check.description }));
}

function findFiles(dir, name) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name === name)
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

async function main() {
  const node = ensureNode22();
  const suite = ensureSuite();
  // Issue #24: the 2025-era plugin (SDK 1.x) and, for the input-required scenarios, a 2026-era one (SDK v2).
  const plugin = ensurePlugin('conformance-plugin', '@modelcontextprotocol/sdk');
  const modernPlugin = ensurePlugin('conformance-modern-plugin', '@modelcontextprotocol/server');
  const home = mkdtempSync(join(tmpdir(), 'quiver-conformance-'));
  chmodSync(home, 0o755);
  const env = { QUIVER_HOME: join(home, 'home'), QUIVER_DATA_DIR: join(home, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent' };
  let serve;
  let proxy;
  try {
    quiver(env, ['plugin', 'add', plugin, '--name', 'conformance']);
    quiver(env, ['plugin', 'add', modernPlugin, '--name', 'conformance-modern']);
    if (!values.defaults) quiver(env, ['workspace', 'set', 'default', '--exposure', 'all', '--native-names', 'on']);
    const key = JSON.parse(quiver(env, ['keys', 'create', 'conformance', '--scope', 'mcp', '--json'])).key;
    serve = await startServe(env);
    proxy = await startKeyProxy(serve.url, key);
    const url = `http://127.0.0.1:${proxy.address().port}/mcp`;
    const outDir = join(home, 'results');
    let problems = 0;
    for (const revision of values.revision ?? REVISIONS) {
      const required = listScenarios(node, suite, revision);
      const scenarios = values.scenario ? required.filter((name) => values.scenario.includes(name)) : required;
      const baseline = readBaseline(values.baseline, revision);
      let passed = 0;
      console.log(`== ${revision}: ${scenarios.length} required server scenarios`);
      for (const scenario of scenarios) {
        const failed = await runScenario(node, suite, url, revision, scenario, outDir);
        const expected = baseline.has(scenario);
        // A baseline reason starting with "timing:" names a check bound by the suite's own short
        // time budget: it may pass on a quiet machine, so a pass is no surprise there.
        const timingBound = expected && /^timing:/.test(baseline.get(scenario));
        if (failed.length === 0) passed += 1;
        const verdict =
          failed.length === 0 ? (timingBound ? 'pass (timing-bound, in the baseline)' : expected ? 'UNEXPECTED PASS (remove it from the baseline)' : 'pass') : expected ? 'fail (expected)' : 'FAIL';
        if ((failed.length === 0) === expected && !timingBound) problems += 1;
        console.log(`${scenario.padEnd(46)} ${verdict}`);
        for (const check of failed) console.log(`    ${check.id}: ${String(check.reason).split('\n')[0].slice(0, 240)}`);
      }
      console.log(`${revision}: ${passed} of ${scenarios.length} pass\n`);
    }
    if (values.defaults) {
      console.log('defaults: no baseline comparison');
    } else {
      console.log(`${problems === 0 ? 'matches the baseline' : `${problems} differ from the baseline`}`);
      process.exitCode = problems === 0 ? 0 : 1;
    }
  } finally {
    proxy?.close();
    proxy?.closeAllConnections?.();
    if (serve) {
      serve.child.kill('SIGTERM');
      await new Promise((done) => (serve.child.exitCode === null ? serve.child.once('exit', done) : done()));
    }
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
