/**
 * A light start (issue #28): `quiver --help`, a command forwarded to a running server and the
 * package root load only what they use. Asserted on the module graph each real process
 * loaded (test/helpers/module-recorder.mjs), not on a time: the TypeScript compiler, the
 * tokenizer and the database drivers load where they are used, and a forwarded command
 * loads neither the app nor the server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUIVER_BIN, startServe, stopChild } from '../helpers/cli.ts';

const RECORDER = fileURLToPath(new URL('../helpers/module-recorder.mjs', import.meta.url));
const SOURCE_ROOT = fileURLToPath(new URL('../../src/', import.meta.url));

/**
 * Packages loaded only where they are used: a start that needs none of them loads none. undici
 * (~110 CommonJS files) is the SSRF guard's, loaded on the first request to a remote plugin.
 */
const HEAVY_PACKAGES = ['typescript', 'gpt-tokenizer', '@electric-sql/pglite', '@electric-sql/pglite-pgvector', 'pg', 'undici'];

/**
 * The schema library: `quiver --help` and a forwarded command validate nothing with it (the
 * configuration's schemas are checked where a command runs, the server's answer by hand).
 */
const SCHEMA_PACKAGES = ['zod'];

/** The MCP SDK's OAuth client (with its schemas), loaded on the first remote authorization. */
const SDK_OAUTH_CLIENT = /\/node_modules\/@modelcontextprotocol\/sdk\/dist\/[^/]+\/client\/auth\.js$/;

/**
 * Both MCP client stacks (the 1.x SDK's client and `@modelcontextprotocol/client`, ~3 MB of heap
 * each), loaded by `runtime/upstream-client.ts` when the first plugin connects or is probed.
 */
const SDK_CLIENT_STACKS = /\/node_modules\/@modelcontextprotocol\/(?:client\/|sdk\/dist\/[^/]+\/client\/)/;

/**
 * Both MCP server stacks (`@modelcontextprotocol/server`, the 2026-07-28 revision's, and the 1.x
 * SDK's `server/*`, which brings zod v3 and zod-to-json-schema), loaded by `gateway/sdk-servers.ts`
 * with the first MCP request or session.
 */
const SDK_SERVER_STACKS = /\/node_modules\/@modelcontextprotocol\/(?:server\/|sdk\/dist\/[^/]+\/server\/)/;

/** Runs `node --import <recorder> ARGS` and returns its output and every module URL it loaded. */
function runRecorded(args: string[], env: Record<string, string>, folder: string): Promise<{ code: number | null; stdout: string; stderr: string; modules: string[] }> {
  const log = join(folder, `modules-${Math.random().toString(36).slice(2)}.txt`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', RECORDER, ...args], {
      env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', ...env, QUIVER_TEST_MODULE_LOG: log },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const modules = readFileSync(log, 'utf8').split('\n').filter(Boolean);
      resolve({ code, stdout, stderr, modules });
    });
  });
}

/** The heavy packages (or those of `names`) among `modules` (URLs), by package name. */
function heavyPackagesIn(modules: readonly string[], names: readonly string[] = HEAVY_PACKAGES): string[] {
  const found = new Set<string>();
  for (const url of modules) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (match && names.includes(match[1]!)) found.add(match[1]!);
  }
  return [...found].sort();
}

/** Quiver's own modules among `modules`, as paths under src/ or dist/ without the extension (the CLI runs either). */
function quiverModules(modules: readonly string[]): string[] {
  return modules
    .map((url) => /\/(?:src|dist)\/(.+)\.(?:ts|js)$/.exec(url)?.[1])
    .filter((path): path is string => path !== undefined && !path.includes('node_modules'));
}

describe('a light start', { timeout: 300_000 }, () => {
  let folder: string;
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'quiver-light-start-'));
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('quiver --help loads neither the compiler, the tokenizer, a database driver nor the app', async () => {
    const run = await runRecorded([QUIVER_BIN, '--help'], { QUIVER_HOME: join(folder, 'help-home') }, folder);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^  serve /m);
    const own = quiverModules(run.modules);
    // The recorder saw the CLI (an empty record would pass the checks below vacuously).
    assert.ok(own.includes('cli/run-cli') && own.includes('cli/commands/index'), `the CLI modules were not recorded: ${own.slice(0, 10).join(', ')}`);
    assert.deepEqual(heavyPackagesIn(run.modules), []);
    assert.deepEqual(heavyPackagesIn(run.modules, SCHEMA_PACKAGES), []);
    assert.deepEqual(run.modules.filter((url) => SDK_OAUTH_CLIENT.test(url)), []);
    assert.deepEqual(own.filter((path) => path === 'app' || path.startsWith('composition/server') && path !== 'composition/server-flags' || path.startsWith('gateway/gateway') || path.startsWith('api/app')), []);
  });

  describe('a command forwarded to a running quiver serve', () => {
    let server: { child: ChildProcess } | undefined;
    let env: Record<string, string>;
    before(async () => {
      env = { QUIVER_HOME: join(folder, 'serve-home') };
      server = await startServe(['--http', '127.0.0.1:0'], env, 120_000);
    });
    after(async () => {
      if (server) await stopChild(server.child);
    });

    it('runs in the server: this process loads neither the app, the servers nor the store', async () => {
      const run = await runRecorded([QUIVER_BIN, 'plugin', 'list', '--json'], env, folder);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { plugins: [] });
      const own = quiverModules(run.modules);
      // It went over the control socket (had it opened the folder itself, the lock would have refused it).
      assert.ok(own.includes('cli/forward'), 'the forwarding module was not loaded');
      assert.deepEqual(heavyPackagesIn(run.modules), []);
      // Nor the configuration's schemas: the server runs the command with its own configuration.
      assert.deepEqual(heavyPackagesIn(run.modules, SCHEMA_PACKAGES), []);
      assert.ok(!own.includes('config'), 'the forwarded command loaded the configuration module');
      assert.deepEqual(run.modules.filter((url) => SDK_OAUTH_CLIENT.test(url)), []);
      const server = own.filter((path) => path === 'app' || path.startsWith('composition/') && path !== 'composition/server-flags' || path.startsWith('store/pglite') || path.startsWith('store/postgres') || path.startsWith('gateway/gateway') || path.startsWith('api/'));
      assert.deepEqual(server, []);
    });
  });

  it('quiver serve loads the store but neither the compiler, the tokenizer, the YAML parser, PostgreSQL\'s driver, an MCP client nor an MCP server stack', async () => {
    const log = join(folder, 'modules-serve.txt');
    const home = join(folder, 'serve-graph-home');
    const server = await startServe(['--http', '127.0.0.1:0'], { QUIVER_HOME: home, QUIVER_TEST_MODULE_LOG: log, NODE_OPTIONS: `--import ${RECORDER}` }, 120_000);
    await stopChild(server.child);
    const modules = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    // The server ran with the recorder: it loaded the embedded store, the app and the HTTP server.
    const own = quiverModules(modules);
    assert.ok(heavyPackagesIn(modules).includes('@electric-sql/pglite'), 'PGlite was not recorded (recorder not loaded?)');
    assert.ok(own.includes('app') && own.includes('composition/server'), `the app and the servers were not recorded: ${own.slice(0, 10).join(', ')}`);
    // The store's thread starts before the app's and the servers' modules are asked for (issue
    // #28): asked for first, they held the store's own imports back, and PGlite started 0.3-0.7 s
    // later, once they had loaded.
    const thread = own.indexOf('store/pglite-thread');
    assert.ok(thread >= 0 && thread < own.indexOf('app') && thread < own.indexOf('composition/server'), `the store's thread loaded after the app or the servers: ${own.filter((path) => ['app', 'composition/server', 'store/pglite-thread', 'store/open'].includes(path)).join(', ')}`);
    // jose: the first token verified or authorization-server request; spdx: the first licence checked.
    const lazy = ['typescript', 'gpt-tokenizer', 'pg', 'yaml', 'undici', 'jose', 'spdx-expression-parse', 'spdx-satisfies'];
    const loaded = new Set(modules.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name) => name !== undefined));
    assert.deepEqual(lazy.filter((name) => loaded.has(name)), []);
    // No plugin, so no connection: neither MCP client stack (issue #28: idle memory).
    assert.deepEqual(modules.filter((url) => SDK_CLIENT_STACKS.test(url)), []);
    // No MCP client yet: neither MCP server stack, nor the arguments' validator (ajv) nor what the
    // 1.x server brings (zod-to-json-schema, zod v3).
    assert.deepEqual(modules.filter((url) => SDK_SERVER_STACKS.test(url) || /\/node_modules\/zod\/v3\//.test(url)), []);
    assert.deepEqual(['ajv', 'ajv-formats', 'zod-to-json-schema'].filter((name) => loaded.has(name)), []);
    // Nor the verification stages: a verification runs them in a child process. (The gateway
    // screens plugin results with the poisoning scan's signals, and intelligence reads code
    // files the way static analysis does: those three modules serve at run time.)
    const servingAtRunTime = ['verification/stages/security-scan/poisoning', 'verification/stages/security-scan/poisoning-signals', 'verification/stages/static-analysis/code-files'];
    assert.deepEqual(own.filter((path) => path.startsWith('verification/stages/') && !servingAtRunTime.includes(path)), []);
  });

  it('the package root loads neither the compiler, the tokenizer nor a database driver until they are used', async () => {
    const script = [
      `const quiver = await import(${JSON.stringify(join(SOURCE_ROOT, 'index.ts'))});`,
      "if (typeof quiver.createApp !== 'function') throw new Error('no createApp');",
    ].join('\n');
    const run = await runRecorded(['--import', 'tsx', '--input-type=module', '--eval', script], {}, folder);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(quiverModules(run.modules).includes('app'), 'the root did not load app.ts (nothing recorded?)');
    assert.deepEqual(heavyPackagesIn(run.modules), []);
  });

  it('the lazily loaded packages do load on first use (the check above can see them)', async () => {
    const script = [
      `const { countTokens } = await import(${JSON.stringify(join(SOURCE_ROOT, 'core/tokens.ts'))});`,
      `const { scanCode } = await import(${JSON.stringify(join(SOURCE_ROOT, 'intelligence/sources/code-scan.ts'))});`,
      "if (countTokens('hello world') < 1) throw new Error('no tokens');",
      "scanCode([{ path: 'a.ts', text: 'server.tool(\"x\", () => 1);' }]);",
      // A guarded request (to a closed loopback port: refused, but made through undici).
      `const { createRemotePluginFetch, parseOAuthNetworkPolicy } = await import(${JSON.stringify(join(SOURCE_ROOT, 'plugins/oauth/network-guard.ts'))});`,
      "await createRemotePluginFetch(parseOAuthNetworkPolicy('loopback'))('http://127.0.0.1:1/').catch(() => undefined);",
    ].join('\n');
    const run = await runRecorded(['--import', 'tsx', '--input-type=module', '--eval', script], {}, folder);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(heavyPackagesIn(run.modules), ['gpt-tokenizer', 'typescript', 'undici']);
  });

  it('the MCP client stacks load with the connecting module (the serve check above can see them)', async () => {
    const script = `await import(${JSON.stringify(join(SOURCE_ROOT, 'runtime/upstream-client.ts'))});`;
    const run = await runRecorded(['--import', 'tsx', '--input-type=module', '--eval', script], {}, folder);
    assert.equal(run.code, 0, run.stderr);
    const stacks = new Set(run.modules.filter((url) => SDK_CLIENT_STACKS.test(url)).map((url) => (url.includes('/@modelcontextprotocol/client/') ? 'v2' : 'v1')));
    assert.deepEqual([...stacks].sort(), ['v1', 'v2']);
  });

  it('the MCP server stacks and the argument validator load on first use (the serve check above can see them)', async () => {
    const script = [
      `const { modernSdk, sessionServerClass, sessionTransportClass } = await import(${JSON.stringify(join(SOURCE_ROOT, 'gateway/sdk-servers.ts'))});`,
      `const { createValidatorCache } = await import(${JSON.stringify(join(SOURCE_ROOT, 'gateway/argument-validators.ts'))});`,
      'await modernSdk(); await sessionServerClass(); await sessionTransportClass();',
      "const logger = { debug() {}, child() { return logger; } };",
      "const failed = await createValidatorCache(logger).validate({ qualifiedName: 'p__t', inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }, {});",
      "if (!failed) throw new Error('the arguments were not validated');",
    ].join('\n');
    const run = await runRecorded(['--import', 'tsx', '--input-type=module', '--eval', script], {}, folder);
    assert.equal(run.code, 0, run.stderr);
    const stacks = new Set(run.modules.filter((url) => SDK_SERVER_STACKS.test(url)).map((url) => (url.includes('/@modelcontextprotocol/server/') ? 'v2' : 'v1')));
    assert.deepEqual([...stacks].sort(), ['v1', 'v2']);
    assert.ok(run.modules.some((url) => url.includes('/node_modules/ajv/')), 'ajv was not loaded by a validation');
    assert.ok(run.modules.some((url) => url.includes('/node_modules/zod-to-json-schema/')), 'zod-to-json-schema was not loaded with the 1.x server');
  });

  it('the YAML parser loads on the first YAML document (the serve check above can see it)', async () => {
    const script = [
      `const { parseOpenApiText } = await import(${JSON.stringify(join(SOURCE_ROOT, 'openapi/load.ts'))});`,
      "const parsed = parseOpenApiText('openapi: 3.1.0\\ninfo: {title: t}', 'spec.yaml');",
      "if (parsed.openapi !== '3.1.0') throw new Error('not parsed');",
    ].join('\n');
    const run = await runRecorded(['--import', 'tsx', '--input-type=module', '--eval', script], {}, folder);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(run.modules.some((url) => url.includes('/node_modules/yaml/')), 'yaml was not loaded by a YAML document');
  });
});
