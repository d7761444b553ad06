import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isQuiverError } from '../core/errors.ts';
import { clientServers, planClientImport, planClientServer, runClientImport, type ImportPlan } from './client-import.ts';

let folder: string;
before(() => {
  folder = mkdtempSync(join(tmpdir(), 'quiver-client-import-'));
  mkdirSync(join(folder, 'pkg', 'dist'), { recursive: true });
  writeFileSync(join(folder, 'pkg', 'package.json'), JSON.stringify({ name: 'local-server', bin: { 'local-server': './dist/index.js', other: 'dist/other.js' } }));
  writeFileSync(join(folder, 'pkg', 'dist', 'index.js'), '');
  mkdirSync(join(folder, 'mainpkg', 'lib'), { recursive: true });
  writeFileSync(join(folder, 'mainpkg', 'package.json'), JSON.stringify({ name: 'm', main: 'lib/server.js' }));
  mkdirSync(join(folder, 'loose'), { recursive: true });
});
after(() => rmSync(folder, { recursive: true, force: true }));

const install = (plan: ImportPlan) => (plan.action === 'install' ? plan : assert.fail(`expected an install, got: ${plan.action === 'skip' ? plan.reason : ''}`));
const skipped = (plan: ImportPlan) => (plan.action === 'skip' ? plan.reason : assert.fail(`expected a skip, got ${JSON.stringify(plan)}`));

describe('client configuration import (client-import.ts)', () => {
  it('finds servers under mcpServers, servers and mcp.servers, and refuses anything else', () => {
    const entry = { command: 'npx', args: ['x'] };
    assert.deepEqual(Object.keys(clientServers({ mcpServers: { a: entry } })), ['a']);
    assert.deepEqual(Object.keys(clientServers({ servers: { b: entry }, inputs: [] })), ['b']);
    assert.deepEqual(Object.keys(clientServers({ mcp: { servers: { c: entry } } })), ['c']);
    for (const bad of [null, [], {}, { mcpServers: [] }, { servers: 'x' }]) {
      assert.throws(() => clientServers(bad), (error: unknown) => isQuiverError(error, 'invalid_input'));
    }
  });

  it('turns npx, pnpm dlx and bunx into npm sources with the remaining arguments and env as secrets', async () => {
    const npx = install(await planClientServer('Memory Server', { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory@2026.8.31', '--flag', 'v'], env: { TOKEN: 't' } }));
    assert.equal(npx.plugin, 'memory-server');
    assert.equal(npx.source, 'npm:@modelcontextprotocol/server-memory@2026.8.31');
    assert.deepEqual(npx.options, { args: ['--flag', 'v'], secrets: { TOKEN: 't' } });
    assert.equal(install(await planClientServer('a', { type: 'stdio', command: '/usr/local/bin/npx.cmd', args: ['--yes', '--', 'pkg'] })).source, 'npm:pkg');
    assert.equal(install(await planClientServer('b', { command: 'pnpm', args: ['dlx', 'pkg@1'] })).source, 'npm:pkg@1');
    assert.equal(install(await planClientServer('c', { command: 'bunx', args: ['pkg'] })).source, 'npm:pkg');
    assert.match(skipped(await planClientServer('d', { command: 'npx', args: ['-p', 'pkg', 'bin'] })), /npx -p is not supported/);
    assert.match(skipped(await planClientServer('e', { command: 'npx', args: ['-y'] })), /no package/);
    assert.match(skipped(await planClientServer('f', { command: 'npx', args: ['./local.js'] })), /not an npm package name/);
  });

  it('turns url entries into remote sources with their headers, whatever the type says', async () => {
    const remote = install(await planClientServer('r', { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer k', 'X-Team': '${input:team}' } }));
    assert.equal(remote.source, 'https://mcp.example.com/mcp');
    assert.deepEqual(remote.options, { headers: { Authorization: 'Bearer k' } });
    assert.match(remote.warnings.join(), /header X-Team is a client placeholder/);
    assert.equal(install(await planClientServer('s', { type: 'sse', url: 'http://127.0.0.1:9/sse' })).source, 'http://127.0.0.1:9/sse');
    assert.equal(install(await planClientServer('w', { serverUrl: 'https://w.example/mcp' })).source, 'https://w.example/mcp');
    assert.match(skipped(await planClientServer('x', { type: 'http', url: 'ftp://x' })), /not http\(s\)/);
    assert.match(skipped(await planClientServer('y', { type: 'ws', url: 'ws://x' })), /'ws' is not supported/);
    assert.match(skipped(await planClientServer('z', { type: 'http', command: 'npx', args: ['pkg'] })), /give the server's url/);
  });

  it('turns node /abs/script.js into the folder whose package.json names it, and says why not otherwise', async () => {
    const bin = install(await planClientServer('local', { command: 'node', args: [join(folder, 'pkg/dist/index.js'), '--port', '1'] }));
    assert.equal(bin.source, join(folder, 'pkg'));
    assert.deepEqual(bin.options, { args: ['--port', '1'], secrets: {}, bin: 'local-server' });
    assert.equal(install(await planClientServer('main', { command: 'node', args: [join(folder, 'mainpkg/lib/server.js')] })).source, join(folder, 'mainpkg'));
    assert.match(skipped(await planClientServer('other', { command: 'node', args: [join(folder, 'pkg/dist/elsewhere.js')] })), /does not name dist\/elsewhere.js/);
    assert.match(skipped(await planClientServer('rel', { command: 'node', args: ['server.js'] })), /relative path/);
    assert.match(skipped(await planClientServer('opts', { command: 'node', args: ['--inspect', '/x.js'] })), /node options/);
  });

  it('turns uvx and python -m entries into packages of the Python index (issue #26)', async () => {
    const fetch = install(await planClientServer('fetch', { command: 'uvx', args: ['mcp-server-fetch', '--ignore-robots-txt'] }));
    assert.equal(fetch.source, 'pypi:mcp-server-fetch');
    assert.deepEqual(fetch.options.args, ['--ignore-robots-txt']);
    assert.equal(install(await planClientServer('time', { command: 'uvx', args: ['mcp-server-time@2025.1.0'] })).source, 'pypi:mcp-server-time==2025.1.0');
    const from = install(await planClientServer('git', { command: 'uv', args: ['tool', 'run', '--from', 'mcp-server-git==1.0', 'mcp-git', '--repository', '/r'] }));
    assert.equal(from.source, 'pypi:mcp-server-git==1.0');
    assert.equal(from.options.bin, 'mcp-git');
    assert.deepEqual(from.options.args, ['--repository', '/r']);
    const sqlite = install(await planClientServer('sqlite', { command: 'python', args: ['-m', 'mcp_server_sqlite', '--db-path', '/tmp/x.db'] }));
    assert.equal(sqlite.source, 'pypi:mcp-server-sqlite');
    assert.deepEqual(sqlite.options.args, ['--db-path', '/tmp/x.db']);
    assert.match(skipped(await planClientServer('py', { command: 'python3', args: ['server.py'] })), /Python script run by path/);
    assert.match(skipped(await planClientServer('opt', { command: 'uvx', args: ['--python', '3.12', 'x'] })), /uvx option '--python' is not supported/);
    assert.match(skipped(await planClientServer('url', { command: 'uvx', args: ['git+https://example.invalid/x'] })), /not a Python package name/);
  });

  it('reports what it cannot install, with the reason', async () => {
    // A container entry: a container:IMAGE plugin where an engine runs (podman here, scripts/provision/system.sh;
    // the refusal without one is import-container.test.ts's), refused when it would loosen the rules.
    const gh = await planClientServer('gh', { command: 'docker', args: ['run', '-i', '-e', 'TOKEN', 'ghcr.io/github/github-mcp-server'], env: { TOKEN: 't' } });
    assert.ok(gh.action === 'install', JSON.stringify(gh));
    assert.equal(gh.source, 'container:ghcr.io/github/github-mcp-server');
    assert.deepEqual(gh.options.secrets, { TOKEN: 't' });
    assert.match(skipped(await planClientServer('priv', { command: 'docker', args: ['run', '-i', '--privileged', 'x'] })), /would loosen the sandbox's rules/);
    assert.match(skipped(await planClientServer('weird', { command: 'ruby', args: ['s.rb'] })), /'ruby' is not one Quiver can install/);
    assert.match(skipped(await planClientServer('off', { command: 'npx', args: ['pkg'], disabled: true })), /disabled/);
    assert.match(skipped(await planClientServer('ld', { command: 'npx', args: ['pkg'], env: { LD_PRELOAD: '/x.so' } })), /outside its sandbox/);
    assert.match(skipped(await planClientServer('bad', { command: 'npx', args: 'pkg' })), /not a server entry: args/);
    assert.match(skipped(await planClientServer('none', {})), /neither a command nor a url/);
  });

  it('runs the plan in order: one failure never stops the rest; a dry run installs nothing', async () => {
    const plans = await planClientImport({ mcpServers: { a: { command: 'npx', args: ['a'] }, b: { command: 'ruby', args: ['b.rb'] }, c: { command: 'npx', args: ['c'] } } });
    const calls: string[] = [];
    const plugins = {
      async add(source: string, options: { name?: string }) {
        calls.push(source);
        if (source === 'npm:a') throw new Error('npm install failed: E404');
        return { plugin: { name: options.name }, tools: { total: 2 }, warnings: ['w'] } as never;
      },
    };
    assert.deepEqual((await runClientImport(plugins, plans, { dryRun: true })).map((o) => o.status), ['would-install', 'skipped', 'would-install']);
    assert.deepEqual(calls, []);
    const outcomes = await runClientImport(plugins, plans);
    assert.deepEqual(outcomes.map((o) => [o.entry, o.status]), [['a', 'failed'], ['b', 'skipped'], ['c', 'installed']]);
    assert.match(outcomes[0]!.reason!, /E404/);
    assert.deepEqual(outcomes[2]!.warnings, ['w']);
    assert.deepEqual(calls, ['npm:a', 'npm:c']);
  });
});
