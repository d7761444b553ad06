/**
 * The single-node default (embedded database) keeps its MCP sessions across a restart (issue
 * #16): a client binds a tool, `quiver serve` stops with SIGTERM (which writes the sessions
 * written behind) and starts again, and the same `Mcp-Session-Id` calls the bound tool by name
 * on the new process without a new initialize. Before, every session died with the process.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { createRawPluginFolder } from '../plugins/raw-server.ts';

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

let root: string;
let env: Record<string, string>;
let key: string;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'quiver-session-restart-'));
  chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
  env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' };
  await createRawPluginFolder(root, 'echo-plugin');
  const added = await runBinary(['plugin', 'add', join(root, 'echo-plugin'), '--name', 'echo-plugin'], env, 120_000);
  assert.equal(added.code, 0, added.stderr);
  const created = await runBinary(['keys', 'create', 'agent', '--scope', 'mcp', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  key = (JSON.parse(created.stdout) as { key: string }).key;
});

after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

test('a session bound before a restart calls its tool after it', async () => {
  const first = await startServe(['--http', '127.0.0.1:0'], env);
  const headers = { authorization: `Bearer ${key}` };
  let sessionId: string;
  try {
    const client = new Client({ name: 'before-restart', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), { requestInit: { headers } });
    await client.connect(transport);
    sessionId = transport.sessionId!;
    assert.match(text(await client.callTool({ name: 'search_tools', arguments: { query: 'echo the given text back', limit: 2 } })), /echo-plugin__echo/);
    assert.equal(text(await client.callTool({ name: 'echo-plugin__echo', arguments: { text: 'before' } })), 'before');
  } finally {
    assert.equal(await stopChild(first.child), 0);
  }
  const second = await startServe(['--http', '127.0.0.1:0'], env);
  try {
    const client = new Client({ name: 'after-restart', version: '1.0.0' });
    // A transport that already has the session id: the SDK client skips initialize.
    const transport = new StreamableHTTPClientTransport(new URL(`${second.url}/mcp`), { requestInit: { headers }, sessionId });
    await client.connect(transport);
    assert.equal(text(await client.callTool({ name: 'echo-plugin__echo', arguments: { text: 'after' } })), 'after');
    const unknown = new StreamableHTTPClientTransport(new URL(`${second.url}/mcp`), { requestInit: { headers }, sessionId: '00000000-0000-4000-8000-000000000000' });
    const stranger = new Client({ name: 'stranger', version: '1.0.0' });
    await stranger.connect(unknown);
    await assert.rejects(() => stranger.callTool({ name: 'echo-plugin__echo', arguments: { text: 'x' } }), /Session not found|404/);
    await transport.terminateSession();
    await client.close();
  } finally {
    assert.equal(await stopChild(second.child), 0);
  }
});
