/**
 * Per-session forwarding state across replicas (issue #16 follow-up): one app with two real
 * plugin processes (the surface plugin `north`, the forwarding plugin `fwd`) and two production
 * gateways ("replicas", each its own HTTP server and session store) over one database. A client
 * sets `logging/setLevel` and subscribes to a resource on replica A; the same session continues
 * on replica B, which never held it: B's copy takes the level from the row (the plugin's debug
 * log is held back, its info log arrives) and subscribes upstream again, so a resource update
 * reaches the client through B.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend } from '../helpers/backends.ts';
import { createForwardingPluginFolder } from '../e2e/fixtures/forwarding-server.ts';
import { createSurfacePluginFolder } from '../e2e/fixtures/surface-server.ts';
import { createApi } from '../../src/api/app.ts';
import { createApp, type App } from '../../src/app.ts';
import { createAppGateway, type AppGateway } from '../../src/composition/server.ts';
import { mcpRoutes } from '../../src/composition/mcp-routes.ts';
import { loadConfig } from '../../src/config.ts';
import { createSessionStore, type SessionStore } from '../../src/sessions/index.ts';

const limits = { maxSessions: 50, maxSessionsPerKey: 20, maxSessionsPerOrg: 30, idleTtlMs: 60_000 };
const MEMO = 'quiver://north/north%3A%2F%2Fmemo';

interface Replica {
  gateway: AppGateway;
  store: SessionStore;
  close(): Promise<void>;
  url: URL;
}

const textOf = (result: CallToolResult): string => (result.content ?? []).map((item) => (item.type === 'text' ? item.text : '')).join('');

async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(check(), what);
}

describeEachBackend('forwarding state of a stored session across replicas', (backendUnderTest) => {
  let root: string;
  let app: App;
  let key: string;
  const replicas: Replica[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-fwd-state-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folders
    const db = await backendUnderTest.open();
    app = await createApp(loadConfig({ QUIVER_HOME: join(root, 'home'), QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    await app.plugins.add(await createSurfacePluginFolder(root, 'north'), { name: 'north' });
    await app.plugins.add(await createForwardingPluginFolder(root, 'fwd'), { name: 'fwd' });
    await app.plugins.setWorkspaceExposureMode('default', 'all');
    key = (await app.apiKeys.create({ name: 'default', scopes: ['mcp'] })).key;
    for (let n = 0; n < 2; n += 1) {
      const store = createSessionStore({ db, limits, shared: true });
      const gateway = await createAppGateway(app, { storedSessions: true });
      const mcp = mcpRoutes({ gateway: gateway.gateway, sessionStore: store });
      const api = createApi({ apiKeys: app.apiKeys, modules: [...app.apiModules(), mcp] });
      const server = serve({ fetch: api.fetch, hostname: '127.0.0.1', port: 0 });
      await new Promise<void>((resolve) => server.once('listening', () => resolve()));
      const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
      replicas.push({
        gateway,
        store,
        url,
        async close() {
          await mcp.handler.close();
          await gateway.close();
          await store.close();
          await new Promise<void>((resolve) => server.close(() => resolve()));
        },
      });
    }
  });

  after(async () => {
    for (const replica of replicas.splice(0)) await replica.close();
    await app?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** A client of replica `n`; with `sessionId`, it carries that session on (no initialize). */
  async function clientOf(n: number, sessionId?: string) {
    const seen = { logs: [] as Array<{ level: string; logger?: string }>, updates: [] as string[] };
    const client = new Client({ name: `replica-${n}`, version: '1.0.0' });
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => void seen.logs.push(notification.params));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => void seen.updates.push(notification.params.uri));
    const transport = new StreamableHTTPClientTransport(replicas[n]!.url, { requestInit: { headers: { authorization: `Bearer ${key}` } }, ...(sessionId ? { sessionId } : {}) });
    await client.connect(transport);
    // A carried-on session opens its notification stream (GET) the way a new one does.
    if (sessionId) await client.notification({ method: 'notifications/initialized' });
    return { client, transport, seen };
  }

  test('the level and the subscriptions set on A apply on B; an update reaches the client through B', { timeout: 60_000 }, async () => {
    const a = await clientOf(0);
    const sessionId = a.transport.sessionId!;
    await a.client.setLoggingLevel('info');
    assert.deepEqual(await a.client.subscribeResource({ uri: MEMO }), {});
    const row = await replicas[0]!.store.load(sessionId);
    assert.deepEqual(row?.extensions.forwarding, { logLevel: 'info', subscriptions: [MEMO] });

    // The client's next requests land on B, which has never served this session.
    await a.client.close();
    const b = await clientOf(1, sessionId);
    try {
      const report = (await b.client.callTool({ name: 'fwd__report', arguments: { tag: 'B' } })) as CallToolResult;
      assert.ok(!report.isError, textOf(report));
      assert.deepEqual(b.seen.logs.map((log) => log.level), ['info'], 'the level set on A holds back the debug message on B');

      // The client opens its notification stream (GET) in the background; an update sent before
      // it is up is only stored for a resume, so touch again until one arrives live.
      for (let attempt = 0; attempt < 10 && !b.seen.updates.includes(MEMO); attempt += 1) {
        const touched = (await b.client.callTool({ name: 'north__touch_north', arguments: { uri: 'north://memo' } })) as CallToolResult;
        assert.match(textOf(touched), /touched north:\/\/memo/);
        for (let wait = 0; wait < 10 && !b.seen.updates.includes(MEMO); wait += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await eventually(() => b.seen.updates.includes(MEMO), `the update reached the client through B (${JSON.stringify(b.seen.updates)})`);

      // An unsubscribe on B is stored too: the row is back to the level alone.
      await b.client.unsubscribeResource({ uri: MEMO });
      const after = await replicas[1]!.store.load(sessionId);
      assert.deepEqual(after?.extensions.forwarding, { logLevel: 'info' });
    } finally {
      await b.transport.terminateSession().catch(() => undefined);
      await b.client.close();
    }
  });
});
