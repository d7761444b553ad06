/**
 * `/mcp` mounted on the real API app: bearer API keys from the real key service, the `mcp`
 * scope, the key's bindings becoming the session identity; and the stdio identity flags.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApi } from '../../src/api/app.ts';
import { createApiKeyService } from '../../src/access/api-keys.ts';
import type { Database } from '../../src/store/database.ts';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { createLocalTestBackend, type LocalTestBackend } from '../helpers/gateway-backend/local-backend.ts';
import { identityFromFlags, parseExposureMode } from '../../src/composition/server.ts';
import { mcpRoutes } from '../../src/composition/mcp-routes.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { standardPlugins } from './helpers.ts';

test('identityFromFlags: defaults to the default workspace; parses roles, allow-list, exposure', () => {
  assert.deepEqual(identityFromFlags({}), { workspace: 'default', project: null, orgId: null, userId: null, roles: [], tier: null });
  assert.deepEqual(identityFromFlags({ workspace: 'w', org: 'o', user: 'u', role: ['a', 'b'], tier: 'pro', exposure: 'all', 'allow-tool': ['x__y'] }), {
    workspace: 'w', project: null, orgId: 'o', userId: 'u', roles: ['a', 'b'], tier: 'pro', expertAllowList: ['x__y'], exposureMode: 'all',
  });
  assert.throws(() => parseExposureMode('everything'), /exposure mode must be one of/);
});

describeEachBackend('/mcp on the API app with API keys', (backend) => {
  let db: Database;
  let local: LocalTestBackend;
  let gateway: Gateway;
  let close: () => Promise<void>;
  let url: URL;
  let keys: { globex: string; readOnly: string };
  before(async () => {
    db = await backend.open();
    const apiKeys = createApiKeyService({ db });
    keys = {
      globex: (await apiKeys.create({ name: 'globex agent', scopes: ['mcp'], orgId: 'globex', userId: 'g1' })).key,
      readOnly: (await apiKeys.create({ name: 'reader', scopes: ['read'] })).key,
    };
    local = await createLocalTestBackend({ plugins: standardPlugins().filter((plugin) => ['globex', 'mail'].includes(plugin.name)) });
    gateway = createGateway({ backend: local, options: { sessions: { sweepIntervalMs: 0 } } });
    const routes = mcpRoutes({ gateway });
    const api = createApi({ apiKeys, modules: [routes] });
    const server = serve({ fetch: api.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    close = async () => {
      await routes.handler.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
  });
  after(async () => {
    await close();
    await gateway.close();
    await local.close();
    await db.close();
  });

  test('a key with the mcp scope gets a session bound to its organisation', async () => {
    const client = new Client({ name: 't', version: '1' });
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${keys.globex}` } } });
    await client.connect(transport);
    const description = (await client.listTools()).tools.find((tool) => tool.name === 'search_tools')!.description!;
    assert.match(description, /Globex reports/);
    await transport.terminateSession();
    await client.close();
  });

  test('no key is 401, a key without the mcp scope is 403', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    assert.equal((await fetch(url, { method: 'POST', headers, body })).status, 401);
    assert.equal((await fetch(url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${keys.readOnly}` }, body })).status, 403);
  });
});
