/**
 * The MCP endpoint under hostile arguments (issue #18, finding 7), on the real app with the
 * production gateway backend and both databases: `search_tools` / `call_tool` with NUL bytes or
 * 5,000-level nesting get a clean JSON-RPC error or an `isError` result — never an internal
 * error — and the session, and every other session, keeps working.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { mountMcpApi, type AppMcpApi } from './app-mcp-api.ts';

/** Nested `levels` deep, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describeEachBackend('MCP meta-tools under hostile arguments', (backend) => {
  let app: App;
  let home: string;
  let key: string;
  let api: AppMcpApi['api'];
  let close: () => Promise<void>;

  const connect = async () => {
    const client = new Client({ name: 'hostile', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      // No socket: the transport talks to the Hono app directly.
      fetch: async (input, init) => api.request(String(input), init),
    });
    await client.connect(transport);
    return { client, transport };
  };

  /** A call's outcome: a JSON-RPC error code, or the tool result. */
  const attempt = async (client: Client, name: string, args: Record<string, unknown>) => {
    try {
      return { result: await client.callTool({ name, arguments: args }) };
    } catch (error) {
      return { error: error as McpError };
    }
  };

  /** One JSON-RPC message as raw text in a session; the reply's JSON (plain or as one SSE event). */
  const rawCall = async (sessionId: string, body: string) => {
    const response = await api.request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body,
    });
    const text = await response.text();
    const json = response.headers.get('content-type')?.includes('text/event-stream')
      ? (text.split('\n').find((line) => line.startsWith('data: '))?.slice('data: '.length) ?? '{}')
      : text;
    return { status: response.status, text, json };
  };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-mcp-bad-'));
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    await app.catalog.syncPlugin({ pluginId: 'shared', version: '1.0.0', tools: [{ name: 'lookup_weather', description: 'Current weather for a city' }] });
    ({ api, key, close } = await mountMcpApi(app));
  });
  after(async () => {
    await close();
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('NUL bytes and absurd depth in meta-tool arguments fail cleanly, never as internal errors', async () => {
    const { client, transport } = await connect();
    const bystander = await connect();
    // 'refused': InvalidParams; 'clean': any outcome but an internal error.
    const cases: Array<[string, Record<string, unknown>, 'refused' | 'clean']> = [
      ['search_tools', { query: 'weather\u0000' }, 'refused'],
      ['search_tools', { query: nested(40) }, 'refused'],
      ['search_tools', { query: 'weather', ['limit\u0000']: 3 }, 'clean'],
      ['load_capability', { name: 'shared\u0000' }, 'clean'],
      ['call_tool', { name: 'shared__lookup_weather\u0000', arguments: {} }, 'refused'],
      ['call_tool', { name: 'shared__lookup_weather', arguments: nested(100) }, 'refused'],
      ['call_tool', { name: 'shared__lookup_weather', arguments: { city: 'Paris\u0000' } }, 'clean'],
      ['call_tool', { name: 'x'.repeat(100_000) }, 'refused'],
    ];
    for (const [index, [name, args, expected]] of cases.entries()) {
      const outcome = await attempt(client, name, args);
      const label = `case ${index} (${name})`;
      if (expected === 'refused') {
        assert.ok(outcome.error instanceof McpError, `${label}: ${JSON.stringify(outcome.result?.content ?? String(outcome.error)).slice(0, 200)}`);
        assert.equal(outcome.error.code, ErrorCode.InvalidParams, `${label}: ${outcome.error.message}`);
      } else if (outcome.error) {
        assert.ok(outcome.error instanceof McpError, `${label}: ${String(outcome.error)}`);
        assert.notEqual(outcome.error.code, ErrorCode.InternalError, `${label}: ${outcome.error.message}`);
      }
    }
    // 5,000 levels cannot even leave the SDK client (its JSON.stringify overflows): sent as raw text.
    const deep = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
    for (const params of [
      `{"name":"search_tools","arguments":{"query":${deep}}}`,
      `{"name":"search_tools","arguments":${deep}}`,
      `{"name":"call_tool","arguments":{"name":"shared__lookup_weather","arguments":${deep}}}`,
    ]) {
      const reply = await rawCall(transport.sessionId!, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":${params}}`);
      assert.ok(reply.status < 500, `${reply.status} ${reply.text.slice(0, 200)}`);
      const message = JSON.parse(reply.json) as { error?: { code: number; message: string }; result?: { isError?: boolean } };
      assert.ok(message.error !== undefined || message.result?.isError === true, reply.text.slice(0, 200));
      if (message.error) assert.notEqual(message.error.code, ErrorCode.InternalError, message.error.message);
    }
    // Nothing is poisoned: this session and another one still search, and events still land.
    for (const session of [client, bystander.client]) {
      const found = await session.callTool({ name: 'search_tools', arguments: { query: 'weather in paris' } });
      assert.notEqual(found.isError, true);
      assert.match(JSON.stringify(found.content), /shared__lookup_weather/);
    }
    await app.selection.flush();
    const { rows } = await app.db.query<{ n: number }>(`SELECT count(*) AS n FROM tool_selection_events WHERE query_text = 'weather in paris'`);
    assert.equal(Number(rows[0]!.n), 2);
    await transport.terminateSession();
    await client.close();
    await bystander.transport.terminateSession();
    await bystander.client.close();
  });
});
