/**
 * `quiver client config claude|cursor|vscode [--http]` (issue #15): the output is the client's
 * own JSON (Quiver's importer reads it back as a client configuration), the stdio snippet names
 * this checkout's bin by absolute path and really starts a Quiver an MCP client can talk to,
 * and the HTTP snippet carries a key placeholder (VS Code: an `inputs` prompt), never a key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { planClientImport } from '../../src/plugins/client-import.ts';
import { runInProcess } from '../helpers/cli.ts';
import { repoRoot } from '../plugins/helpers.ts';

let data: string;
before(async () => {
  data = await mkdtemp(join(tmpdir(), 'quiver-client-config-'));
});
after(async () => {
  await rm(data, { recursive: true, force: true });
});

describe('quiver client config', () => {
  it('prints each client\'s stdio configuration, which Quiver\'s own importer reads back', async () => {
    const expectedKey = { claude: 'mcpServers', cursor: 'mcpServers', vscode: 'servers' } as const;
    for (const client of ['claude', 'cursor', 'vscode'] as const) {
      const result = await runInProcess(['client', 'config', client]);
      assert.equal(result.code, 0, result.stderr);
      const document = JSON.parse(result.stdout) as Record<string, Record<string, { command: string; args: string[]; type?: string }>>;
      assert.deepEqual(Object.keys(document), [expectedKey[client]]);
      const server = document[expectedKey[client]]!['quiver']!;
      assert.equal(server.command, process.execPath);
      assert.deepEqual(server.args, [join(repoRoot, 'bin/quiver.mjs'), 'serve', '--stdio']);
      assert.ok(existsSync(server.args[0]!));
      assert.equal(server.type, client === 'vscode' ? 'stdio' : undefined);
      assert.match(result.stderr, client === 'vscode' ? /\.vscode\/mcp\.json/ : client === 'cursor' ? /\.cursor\/mcp\.json/ : /claude_desktop_config\.json/);
      // The importer reads it as a client file: `node /abs/bin/quiver.mjs` → this checkout's folder.
      const [plan] = await planClientImport(document);
      assert.equal(plan?.action, 'install');
      assert.equal(plan?.action === 'install' ? plan.source.replace(/\/$/, '') : '', repoRoot.replace(/\/$/, ''));
    }
  });

  it('prints HTTP configurations with a placeholder for the key, never a key', async () => {
    const cursor = JSON.parse((await runInProcess(['client', 'config', 'cursor', '--http'])).stdout);
    assert.deepEqual(cursor, { mcpServers: { quiver: { url: 'http://127.0.0.1:7411/mcp', headers: { Authorization: 'Bearer QUIVER_API_KEY' } } } });
    const claude = await runInProcess(['client', 'config', 'claude', '--http', '--url', 'https://quiver.example/mcp', '--name', 'hub']);
    assert.deepEqual(JSON.parse(claude.stdout), { mcpServers: { hub: { type: 'http', url: 'https://quiver.example/mcp', headers: { Authorization: 'Bearer QUIVER_API_KEY' } } } });
    assert.match(claude.stderr, /quiver keys create claude --scope mcp/);
    const vscode = JSON.parse((await runInProcess(['client', 'config', 'vscode', '--http'])).stdout);
    assert.equal(vscode.servers.quiver.type, 'http');
    assert.equal(vscode.servers.quiver.headers.Authorization, 'Bearer ${input:quiver-api-key}');
    assert.deepEqual(vscode.inputs.map((input: { id: string; password: boolean }) => [input.id, input.password]), [['quiver-api-key', true]]);
    const [plan] = await planClientImport(cursor);
    assert.equal(plan?.action === 'install' ? plan.source : '', 'http://127.0.0.1:7411/mcp');
  });

  it('uses the configured port for --http and keeps the data location the environment set for stdio (issue #26)', async () => {
    const http = JSON.parse((await runInProcess(['client', 'config', 'cursor', '--http'], { QUIVER_PORT: '7999' })).stdout);
    assert.equal(http.mcpServers.quiver.url, 'http://127.0.0.1:7999/mcp');
    const everywhere = JSON.parse((await runInProcess(['client', 'config', 'claude', '--http'], { QUIVER_HOST: '0.0.0.0', QUIVER_PORT: '8123' })).stdout);
    assert.equal(everywhere.mcpServers.quiver.url, 'http://127.0.0.1:8123/mcp', 'a server on every interface is reached on loopback');
    const home = join(data, 'home');
    const stdio = JSON.parse((await runInProcess(['client', 'config', 'claude'], { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data') })).stdout);
    assert.deepEqual(stdio.mcpServers.quiver.env, { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data') });
    const vscode = JSON.parse((await runInProcess(['client', 'config', 'vscode'], { QUIVER_HOME: home })).stdout);
    assert.deepEqual(vscode.servers.quiver.env, { QUIVER_HOME: home });
  });

  it('refuses an unknown client and options that do not apply', async () => {
    assert.equal((await runInProcess(['client', 'config', 'emacs'])).code, 2);
    assert.equal((await runInProcess(['client', 'config'])).code, 2);
    assert.equal((await runInProcess(['client', 'config', 'cursor', '--url', 'http://x/mcp'])).code, 2);
    assert.equal((await runInProcess(['client', 'config', 'cursor', '--http', '--url', 'not a url'])).code, 2);
  });

  it('its stdio command really starts Quiver for an MCP client', { timeout: 120_000 }, async () => {
    const result = await runInProcess(['client', 'config', 'claude', '--data', data]);
    const server = (JSON.parse(result.stdout) as { mcpServers: { quiver: { command: string; args: string[] } } }).mcpServers.quiver;
    assert.deepEqual(server.args.slice(-2), ['--data', data]);
    const client = new Client({ name: 'client-config-test', version: '0' });
    await client.connect(new StdioClientTransport({ command: server.command, args: server.args, env: { HOME: data, QUIVER_LOG_LEVEL: 'silent' }, stderr: 'ignore' }));
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'search_tools'), tools.map((tool) => tool.name).join(', '));
    } finally {
      await client.close();
    }
  });
});
