/**
 * End to end, as a user runs it: install a real npm MCP server with `quiver plugin add`, then
 * point real MCP clients at `quiver serve` — over stdio (as Claude Desktop would spawn it)
 * and over Streamable HTTP with an API key — and search, bind, call.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QUIVER_BIN, runBinary, startServe, stopChild } from '../helpers/cli.ts';

describe('quiver as an MCP endpoint in front of a real npm MCP server', { timeout: 600_000 }, () => {
  let home: string;
  let env: Record<string, string>;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-e2e-'));
    chmodSync(home, 0o755); // sandboxed plugins run as an unprivileged user
    env = { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data') };
    const added = await runBinary(['plugin', 'add', 'npm:@modelcontextprotocol/server-everything', '--name', 'everything', '--json'], env, 300_000);
    assert.equal(added.code, 0, added.stderr);
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

  it('over stdio: search_tools binds tools (list_changed), then the bound tool runs upstream', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [QUIVER_BIN, 'serve', '--stdio'],
      env: { ...(process.env as Record<string, string>), ...env, QUIVER_LOG_LEVEL: 'silent' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    let listChanged = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      listChanged++;
    });
    await client.connect(transport);
    try {
      const initial = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(initial.includes('search_tools'), `meta-tools first: ${initial.join(', ')}`);
      assert.ok(!initial.includes('everything__echo'), 'nothing bound before a search');

      const search = (await client.callTool({ name: 'search_tools', arguments: { query: 'echo back a message', limit: 3 } })) as CallToolResult;
      assert.ok(!search.isError, text(search));
      assert.match(text(search), /everything__echo/);
      for (let i = 0; i < 50 && listChanged === 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(listChanged > 0, 'tools/list_changed was sent');
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'everything__echo'));

      const echoed = (await client.callTool({ name: 'everything__echo', arguments: { message: 'hello quiver' } })) as CallToolResult;
      assert.ok(!echoed.isError, text(echoed));
      assert.match(text(echoed), /hello quiver/);

      await assert.rejects(client.callTool({ name: 'everything__no_such_tool', arguments: {} }), /Unknown tool|not found|search_tools/i);
    } finally {
      await client.close();
    }
  });

  it('a workspace set to `all` exposure lists every enabled tool without meta-tools', async () => {
    const set = await runBinary(['workspace', 'set', 'default', '--exposure', 'all'], env);
    assert.equal(set.code, 0, set.stderr);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [QUIVER_BIN, 'serve', '--stdio'],
      env: { ...(process.env as Record<string, string>), ...env, QUIVER_LOG_LEVEL: 'silent' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e-all', version: '1.0.0' });
    await client.connect(transport);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('everything__echo'), names.join(', '));
      assert.ok(!names.includes('search_tools'));
    } finally {
      await client.close();
      assert.equal((await runBinary(['workspace', 'set', 'default', '--exposure', 'default'], env)).code, 0);
    }
  });

  it('over Streamable HTTP with an API key: the same flow, and no key means 401', async () => {
    // A key with only the mcp scope, created while no server holds the data folder.
    const key = await createKey(env);
    const served = await startServe(['--http', '127.0.0.1:0'], env);
    try {
      const unauthenticated = await fetch(`${served.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(unauthenticated.status, 401);

      const client = new Client({ name: 'e2e-http', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
      );
      try {
        const search = (await client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers', limit: 3 } })) as CallToolResult;
        assert.match(text(search), /everything__get-sum|everything__add/);
        const name = /everything__(get-sum|add)/.exec(text(search))![0];
        const sum = (await client.callTool({ name, arguments: { a: 2, b: 40 } })) as CallToolResult;
        assert.ok(!sum.isError, text(sum));
        assert.match(text(sum), /42/);
      } finally {
        await client.close();
      }
    } finally {
      await stopChild(served.child);
    }
  });
});

async function createKey(env: Record<string, string>): Promise<string> {
  const created = await runBinary(['keys', 'create', 'e2e', '--scope', 'mcp', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  return (JSON.parse(created.stdout) as { key: string }).key;
}
