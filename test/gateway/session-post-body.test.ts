/**
 * Issue #28, the `/mcp` request path: a session's POST body is read with `request.text()` (on
 * @hono/node-server a direct read of the socket) and handed to the SDK transport parsed, and the
 * API's body limit decides from `Content-Length` without reading the body; neither reads
 * `request.body`, whose first read turns node-server's lightweight request into a full web
 * `Request` over a web stream. The requests here throw on `request.body`, so a read of it fails
 * the test. The answers to bad bodies stay the SDK's and the API's own: not JSON is 400 / -32700,
 * a wrong Accept is 406 before the body is looked at, a body over the limit is 413 whether it
 * declares its length or streams without one. On the real app, both databases.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { mountMcpApi, type AppMcpApi } from './app-mcp-api.ts';

/** A request whose `body` stream must not be read: reading it throws. */
function bodyNotStreamed(url: string, init: RequestInit): Request {
  const request = new Request(url, init);
  Object.defineProperty(request, 'body', {
    get() {
      throw new Error('request.body was read');
    },
  });
  return request;
}

type Reply = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/** The JSON-RPC response of a reply, plain or the SSE event that carries an id (notifications may come first). */
async function replyMessage(response: Response): Promise<Reply> {
  const text = await response.text();
  if (!response.headers.get('content-type')?.includes('text/event-stream')) return JSON.parse(text) as Reply;
  const messages = text.split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice('data: '.length)) as Reply);
  return messages.find((message) => 'id' in message) ?? {};
}

describeEachBackend('a session POST body on /mcp', (backend) => {
  let app: App;
  let home: string;
  let key: string;
  let api: AppMcpApi['api'];
  let close: () => Promise<void>;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  const API_BODY_LIMIT = 64 * 1024;

  const headers = (accept = 'application/json, text/event-stream') => ({
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept,
    'mcp-session-id': transport.sessionId!,
    'mcp-protocol-version': '2025-11-25',
  });

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-post-body-'));
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    await app.catalog.syncPlugin({ pluginId: 'shared', version: '1.0.0', tools: [{ name: 'lookup_weather', description: 'Current weather for a city' }] });
    const mounted = await mountMcpApi(app, { maxBodyBytes: API_BODY_LIMIT });
    ({ api, key } = mounted);
    client = new Client({ name: 'post-body', version: '1' });
    transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (input, init) => api.request(String(input), init),
    });
    await client.connect(transport);
    close = async () => {
      await client.close();
      await mounted.close();
    };
  });
  after(async () => {
    await close();
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('answers a search whose request body is never read as a stream', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'weather in paris' } } });
    const response = await api.request(bodyNotStreamed('http://127.0.0.1/mcp', { method: 'POST', headers: { ...headers(), 'content-length': String(Buffer.byteLength(body)) }, body }));
    assert.equal(response.status, 200);
    const message = await replyMessage(response);
    assert.equal(message.id, 7);
    assert.match(JSON.stringify(message.result), /shared__lookup_weather/);
  });

  it('keeps the SDK answers to bad bodies, in its order', async () => {
    const notJson = await api.request('http://127.0.0.1/mcp', { method: 'POST', headers: headers(), body: '{"jsonrpc":' });
    assert.equal(notJson.status, 400);
    assert.deepEqual((await replyMessage(notJson)).error, { code: -32700, message: 'Parse error: Invalid JSON' });
    // Accept is checked before the body: a wrong Accept with a bad body is still 406.
    const wrongAccept = await api.request('http://127.0.0.1/mcp', { method: 'POST', headers: headers('application/json'), body: '{"jsonrpc":' });
    assert.equal(wrongAccept.status, 406);
    // Not a JSON-RPC message: the SDK's own refusal.
    const notMessage = await api.request('http://127.0.0.1/mcp', { method: 'POST', headers: headers(), body: 'null' });
    assert.equal(notMessage.status, 400);
    assert.equal((await replyMessage(notMessage)).error?.code, -32700);
    // The session still works.
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'weather in paris' } });
    assert.match(JSON.stringify(found.content), /shared__lookup_weather/);
  });

  it('refuses a body over the API limit, declared or streamed', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'x'.repeat(API_BODY_LIMIT) } } });
    // Declared: refused on the header, the body never read.
    const declared = await api.request(bodyNotStreamed('http://127.0.0.1/mcp', { method: 'POST', headers: { ...headers(), 'content-length': String(Buffer.byteLength(big)) }, body: big }));
    assert.equal(declared.status, 413);
    // Streamed without a length: counted as it arrives.
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 4096) controller.enqueue(bytes.subarray(at, at + 4096));
        controller.close();
      },
    });
    const streamed = await api.request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...headers(), 'transfer-encoding': 'chunked' }, body: stream, duplex: 'half' } as RequestInit);
    assert.equal(streamed.status, 413);
    // Under the limit, declared: through, and answered.
    const small = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'weather' } } });
    const through = await api.request(bodyNotStreamed('http://127.0.0.1/mcp', { method: 'POST', headers: { ...headers(), 'content-length': String(Buffer.byteLength(small)) }, body: small }));
    assert.equal(through.status, 200);
    assert.equal((await replyMessage(through)).id, 9);
  });
});
