/**
 * The composition root's servers on a real App: serveHttp binds loopback only unless told,
 * creates the first admin key once, serves the API and /mcp with the configured session
 * limits, reports a taken port as unavailable; serveStdio ends when its client goes away.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { QuiverError } from '../../src/core/errors.ts';
import { identityFromFlags, serveHttp, serveStdio, type HttpServer } from '../../src/composition/server.ts';
import { describeEachBackend } from '../helpers/backends.ts';

describeEachBackend('composition root servers', (backend) => {
  let home: string;
  let app: App;
  let server: HttpServer;
  let mcpKey: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-composition-'));
    const db = await backend.open();
    const env = { QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_MCP_MAX_SESSIONS_PER_KEY: '1' };
    app = await createApp(loadConfig(env), { db });
    await app.catalog.syncPlugin({ pluginId: 'shared', version: '1.0.0', tools: [{ name: 'lookup_weather', description: 'Current weather for a city' }] });
  });
  after(async () => {
    await server?.close();
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('refuses every interface without the explicit flag, before creating anything', async () => {
    await assert.rejects(serveHttp(app, { host: '0.0.0.0', port: 0 }), (error: unknown) => error instanceof QuiverError && error.code === 'invalid_input');
  });

  it('listens on loopback and creates the first admin key once', async () => {
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    assert.match(server.adminKey ?? '', /\S{20,}/);
    const health = await fetch(`${server.url}/api/v1/plugins`, { headers: { authorization: `Bearer ${server.adminKey}` } });
    assert.equal(health.status, 200);
  });

  it('reports a taken port as unavailable', async () => {
    const port = Number(new URL(server.url).port);
    await assert.rejects(serveHttp(app, { host: '127.0.0.1', port }), (error: unknown) => error instanceof QuiverError && error.code === 'unavailable');
  });

  it('serves /mcp to an mcp key with the session limit from the configuration', async () => {
    mcpKey = (await app.apiKeys.create({ name: 'agent', scopes: ['mcp'] })).key;
    const unauthenticated = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unauthenticated.status, 401);
    const connect = async () => {
      const client = new Client({ name: 'composition-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${mcpKey}` } } }));
      return client;
    };
    const first = await connect();
    let second: Client | undefined;
    try {
      const { tools } = await first.listTools();
      assert.ok(tools.some((tool) => tool.name === 'search_tools'), JSON.stringify(tools.map((tool) => tool.name)));
      // QUIVER_MCP_MAX_SESSIONS_PER_KEY=1: a second session of the same key pushes out its first.
      second = await connect();
      await second.listTools();
      await assert.rejects(first.listTools());
    } finally {
      await first.close();
      await second?.close();
    }
  });

  it('serveStdio ends its session when the client closes stdin', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stdio = await serveStdio(app, { identity: identityFromFlags({}), stdin, stdout });
    assert.equal(stdio.adminKey, undefined, 'the admin key exists already');
    stdin.end();
    await stdio.closed;
    await stdio.close();
  });
});
