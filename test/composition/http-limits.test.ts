/**
 * Issue #23, HTTP hygiene, on the real server `quiver serve` runs (serveHttp over a real App)
 * and raw sockets: a 413 closes its connection cleanly (it says `Connection: close`), a client
 * that trickles its headers or its body is answered 408 and cut off after the configured time
 * while normal requests are served, one address holds at most the configured number of
 * connections, and a long-lived MCP session outlives the request timeout.
 */
import { before, after, it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const MAX_PER_CLIENT = 4;

/** A raw connection that records what it receives and how it ended. */
interface RawConnection {
  socket: Socket;
  received(): string;
  /** Resolves when the connection is closed, with the error that closed it, if any. */
  closed: Promise<{ error: NodeJS.ErrnoException | undefined; at: number }>;
}

function open(port: number, localAddress = '127.0.0.1'): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    let data = '';
    let error: NodeJS.ErrnoException | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', (caught) => (error = caught));
    const closed = new Promise<{ error: NodeJS.ErrnoException | undefined; at: number }>((done) => socket.once('close', () => done({ error, at: Date.now() })));
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Waits until `condition` holds (polling), failing after `timeoutMs`. */
async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The connection's end, or undefined when it is still open after `timeoutMs`. */
function closedWithin(connection: RawConnection, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
  return Promise.race([connection.closed, late]).finally(() => clearTimeout(timer));
}

const responses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g)].map((match) => ({ status: Number(match[1]), headers: match[2]!.toLowerCase() }));

describe('HTTP server limits', () => {
  let home: string;
  let app: App;
  let server: HttpServer;
  let port: number;
  let key: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-http-limits-'));
    const env = {
      QUIVER_HOME: home,
      QUIVER_DATABASE_URL: 'memory://',
      QUIVER_LOG_LEVEL: 'silent',
      QUIVER_HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      QUIVER_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      QUIVER_HTTP_MAX_CONNECTIONS_PER_CLIENT: String(MAX_PER_CLIENT),
    };
    app = await createApp(loadConfig(env));
    await app.catalog.syncPlugin({ pluginId: 'shared', version: '1.0.0', tools: [{ name: 'lookup_weather', description: 'Current weather for a city' }] });
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    port = Number(new URL(server.url).port);
    key = server.adminKey!;
  });
  after(async () => {
    await server?.close();
    await app?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const healthy = async () => (await fetch(`${server.url}/healthz`)).status;

  it('a 413 says Connection: close and ends the connection cleanly; the client opens a new one', async () => {
    const connection = await open(port);
    // A client that declares a large body and, seeing the refusal, sends its next request instead.
    connection.socket.write(
      `POST /v1/select HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`,
    );
    await until(() => responses(connection.received()).length === 1, 'the refusal');
    const [first] = responses(connection.received());
    assert.equal(first?.status, 413, connection.received().slice(0, 300));
    if (/^connection: close$/m.test(first.headers)) {
      const { error } = await connection.closed;
      assert.equal(error, undefined, `closed cleanly, not reset (${error?.code})`);
    } else {
      // Kept alive: the next request on this connection must then be answered.
      connection.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await Promise.race([connection.closed, until(() => responses(connection.received()).length === 2, 'the next answer', 10_000).catch(() => {})]);
      assert.equal(responses(connection.received())[1]?.status, 200, 'the 413 said keep-alive, then the connection ended without answering the next request');
      connection.socket.destroy();
    }
    assert.equal(await healthy(), 200);
  });

  it('cuts off a client that trickles its headers, and one that trickles its body, while others are served', async () => {
    const slowHeaders = await open(port);
    const slowBody = await open(port);
    const started = Date.now();
    slowHeaders.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    slowBody.socket.write(`POST /v1/select HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"query":"`);
    const drip = setInterval(() => {
      if (!slowHeaders.socket.destroyed) slowHeaders.socket.write('X-Drip: 1\r\n');
      if (!slowBody.socket.destroyed) slowBody.socket.write('a');
    }, 100);
    try {
      // Served meanwhile, on connections of their own.
      for (let index = 0; index < 3; index++) assert.equal(await healthy(), 200);
      // Node's own defaults (60 s, 300 s) would keep them far longer than this wait.
      const [headersEnd, bodyEnd] = await Promise.all([closedWithin(slowHeaders, 20_000), closedWithin(slowBody, 20_000)]);
      assert.ok(headersEnd && bodyEnd, `still open after 20 s: ${headersEnd ? '' : 'slow headers '}${bodyEnd ? '' : 'slow body'}`);
      for (const [name, connection, end, limit] of [
        ['slow headers', slowHeaders, headersEnd!, HEADERS_TIMEOUT_MS],
        ['slow body', slowBody, bodyEnd!, REQUEST_TIMEOUT_MS],
      ] as const) {
        const [answer] = responses(connection.received());
        assert.equal(answer?.status, 408, `${name}: ${connection.received()}`);
        assert.match(answer.headers, /^connection: close$/m, name);
        // Not before its limit; the upper bound is loose for a loaded machine (the cut is what counts).
        assert.ok(end.at - started >= limit - 50, `${name} cut after ${end.at - started} ms, limit ${limit}`);
      }
    } finally {
      clearInterval(drip);
      slowHeaders.socket.destroy();
      slowBody.socket.destroy();
    }
  });

  it(`holds at most ${MAX_PER_CLIENT} connections per client address; others are not affected`, async () => {
    const held: RawConnection[] = [];
    try {
      for (let index = 0; index < MAX_PER_CLIENT; index++) {
        const connection = await open(port);
        connection.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        await until(() => responses(connection.received()).length === 1, 'a kept-alive answer');
        held.push(connection);
      }
      const over = await open(port);
      over.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await over.closed;
      const [refused] = responses(over.received());
      assert.equal(refused?.status, 503, over.received());
      assert.match(refused.headers, /^connection: close$/m);
      assert.equal(responses(over.received()).length, 1, 'its request was not handled');

      // Another address (loopback has them all) is counted on its own.
      const other = await open(port, '127.0.0.2');
      other.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      await other.closed;
      assert.equal(responses(other.received())[0]?.status, 200);

      // The held connections still work, and a closed one frees its place.
      held[0]!.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await until(() => responses(held[0]!.received()).length === 2, 'a second answer on a held connection');
      held.shift()!.socket.destroy();
      let admitted = false;
      for (let attempt = 0; attempt < 100 && !admitted; attempt++) {
        const next = await open(port);
        next.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
        await next.closed;
        admitted = responses(next.received())[0]?.status === 200;
        if (!admitted) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(admitted, 'a place freed by a closed connection is given to the next one');
    } finally {
      for (const connection of held) connection.socket.destroy();
    }
  });

  it('an MCP session and its event stream outlive the request timeout', async () => {
    const mcpKey = (await app.apiKeys.create({ name: 'agent', scopes: ['mcp'] })).key;
    const client = new Client({ name: 'long-lived', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${mcpKey}` } } });
    const errors: Error[] = [];
    await client.connect(transport);
    transport.onerror = (error) => errors.push(error);
    try {
      await client.listTools();
      // Longer than both timeouts: the open event stream (a GET whose request ended long ago) is not cut.
      await new Promise((resolve) => setTimeout(resolve, REQUEST_TIMEOUT_MS * 2));
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'search_tools'));
      assert.deepEqual(errors.map((error) => error.message), []);
    } finally {
      await client.close();
    }
  });
});
