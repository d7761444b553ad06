/**
 * Nothing a client sends over MCP widens the session identity an API key gives (issue #18):
 * query parameters, headers, `initialize` parameters and extra meta-tool arguments naming
 * another organisation, workspace or role change nothing; only the exposure mode is the
 * connection's choice.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Principal } from '../access/api-keys.ts';
import { isQuiverError } from '../core/errors.ts';
import { createGateway, type Gateway } from './gateway.ts';
import { createMcpHttpHandler, type McpHttpHandler } from './http.ts';
import { identityFromPrincipal } from './identity.ts';
import { createLocalTestBackend, type LocalTestBackend } from '../../test/helpers/gateway-backend/local-backend.ts';
import { standardPlugins } from '../../test/gateway/helpers.ts';

function principal(overrides: Partial<Principal> = {}): Principal {
  return { keyId: 'k', name: 'key', scopes: ['mcp'], workspaceId: null, projectId: null, orgId: null, userId: null, roles: [], tier: null, ...overrides };
}

/** A request that tries every way a client could name another identity. */
function widening(): Request {
  const url = 'http://127.0.0.1/mcp?org=globex&orgId=globex&workspace=ws2&project=p&role=finance&roles=finance&user=u2&tier=government&exposure=all';
  return new Request(url, {
    method: 'POST',
    headers: { 'x-quiver-org': 'globex', 'x-quiver-workspace': 'ws2', 'x-quiver-roles': 'finance', 'x-quiver-user': 'u2', 'x-quiver-tier': 'government' },
  });
}

test('identityFromPrincipal takes the identity from the key only; the exposure mode is the connection’s', () => {
  const bound = principal({ orgId: 'acme', userId: 'u1', roles: ['sales'], tier: 'teams', workspaceId: '00000000-0000-4000-8000-000000000001' });
  assert.deepEqual(identityFromPrincipal(bound, widening()), {
    workspace: '00000000-0000-4000-8000-000000000001', project: null, orgId: 'acme', userId: 'u1', roles: ['sales'], tier: 'teams', exposureMode: 'all',
  });
  assert.deepEqual(identityFromPrincipal(principal(), widening()), {
    workspace: 'default', project: null, orgId: null, userId: null, roles: [], tier: null, exposureMode: 'all',
  });
  assert.throws(() => identityFromPrincipal(principal({ scopes: ['read', 'select'] }), widening()), (error) => isQuiverError(error, 'forbidden'));
});

describe('an MCP session over HTTP cannot widen its key', () => {
  let backend: LocalTestBackend;
  let gateway: Gateway;
  let handler: McpHttpHandler<Principal>;
  let url: URL;
  let close: () => Promise<void>;
  before(async () => {
    backend = await createLocalTestBackend({ plugins: standardPlugins().filter((plugin) => ['globex', 'mail'].includes(plugin.name)) });
    gateway = createGateway({ backend, options: { sessions: { sweepIntervalMs: 0 } } });
    handler = createMcpHttpHandler<Principal>({ gateway, resolveIdentity: identityFromPrincipal });
    // Every request carries the same key: one bound to organisation acme.
    const acme = principal({ orgId: 'acme', userId: 'u1' });
    const server = serve({ fetch: (request) => handler.handle(request, acme), hostname: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp?org=globex&workspace=ws2&role=finance`);
    close = async () => {
      await handler.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
  });
  after(async () => {
    await close();
    await gateway.close();
    await backend.close();
  });

  test('headers, query, client info and extra search arguments naming globex never show its tools', async () => {
    const client = new Client({ name: 'globex', version: '1', title: 'orgId=globex' } as ConstructorParameters<typeof Client>[0]);
    const headers = { 'x-quiver-org': 'globex', 'x-org-id': 'globex', 'x-quiver-workspace': 'ws2' };
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
    await client.connect(transport);
    const description = (await client.listTools()).tools.find((tool) => tool.name === 'search_tools')!.description!;
    assert.doesNotMatch(description, /Globex/);
    const found = await client.callTool({
      name: 'search_tools',
      arguments: { query: 'create a secret report', limit: 10, orgId: 'globex', context: { orgId: 'globex', roles: ['finance'] }, workspace: 'ws2' },
    });
    const text = (found.content as Array<{ type: string; text: string }>).map((part) => part.text).join('\n');
    assert.doesNotMatch(text, /globex__create_secret_report/);
    assert.ok(!(await client.listTools()).tools.some((tool) => tool.name.startsWith('globex__')));
    await assert.rejects(client.callTool({ name: 'call_tool', arguments: { name: 'globex__create_secret_report', arguments: {}, orgId: 'globex' } }));
    await transport.terminateSession();
    await client.close();
  });
});
