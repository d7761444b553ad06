/**
 * A session cannot widen its key, on the real app (issue #28: this was proven only against the
 * test backend, test/helpers/gateway-backend). A hub on PGlite and on PostgreSQL holds a tool of
 * organisation A, one of organisation B, a shared one and a plugin denied to A; an MCP key bound
 * to A connects to `quiver serve`'s /mcp (serveHttp) with everything a client could send to
 * claim B (query, headers, client info, extra search and call arguments), in `all` and `search`
 * exposure. It sees A's tools and never B's nor the denied plugin's; calling one is an unknown
 * tool. A key of B sees B's tool through the same server, so the fixture can fail.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { describeEachBackend } from '../helpers/backends.ts';

/** Everything a client could send to claim organisation B's view. */
const WIDENING_HEADERS = { 'x-quiver-org': 'org-b', 'x-org-id': 'org-b', 'x-quiver-workspace': 'ws2', 'x-quiver-role': 'finance' };
const WIDENING_QUERY = 'org=org-b&orgId=org-b&workspace=ws2&role=finance';

describeEachBackend('an MCP session on the real app cannot widen its key', (backend) => {
  let home: string;
  let app: App;
  let server: HttpServer;
  let keyA: string;
  let keyB: string;
  const clients: Client[] = [];

  const connect = async (key: string, exposure: 'all' | 'search', widen: boolean): Promise<Client> => {
    const client = new Client({ name: widen ? 'org-b' : 'agent', version: '1', ...(widen ? { title: 'orgId=org-b' } : {}) } as ConstructorParameters<typeof Client>[0]);
    const url = new URL(`${server.url}/mcp?exposure=${exposure}${widen ? `&${WIDENING_QUERY}` : ''}`);
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}`, ...(widen ? WIDENING_HEADERS : {}) } } }));
    clients.push(client);
    return client;
  };
  const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
  const searchText = async (client: Client, extra: Record<string, unknown> = {}) => {
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'quarterly weather report wire money transfer', limit: 10, ...extra } });
    return (found.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
  };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-real-isolation-'));
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    await app.catalog.syncPlugin({
      pluginId: 'shared',
      version: '1.0.0',
      tools: [
        { name: 'lookup_weather', description: 'Current weather for a city' },
        { name: 'a_private_report', description: 'Quarterly weather report for org A', orgId: 'org-a' },
        { name: 'b_private_report', description: 'Quarterly weather report for org B', orgId: 'org-b' },
      ],
    });
    await app.catalog.syncPlugin({ pluginId: 'finance', version: '1.0.0', tools: [{ name: 'wire_money', description: 'Send a wire transfer of money' }] });
    const finance = await app.catalog.getToolByQualifiedName('finance__wire_money');
    await app.catalog.createVisibilityRule({ ruleType: 'org', effect: 'deny', pluginId: finance.pluginId!, conditions: { orgIds: ['org-a'] }, priority: 10 });
    keyA = (await app.apiKeys.create({ name: 'agent of org a', scopes: ['mcp'], orgId: 'org-a' })).key;
    keyB = (await app.apiKeys.create({ name: 'agent of org b', scopes: ['mcp'], orgId: 'org-b' })).key;
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await server?.close();
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('the key of organisation B sees its own tool and the finance plugin (the fixture can fail)', async () => {
    const tools = await names(await connect(keyB, 'all', false));
    assert.ok(tools.includes('shared__b_private_report') && tools.includes('finance__wire_money'), tools.join(', '));
    assert.ok(!tools.includes('shared__a_private_report'), tools.join(', '));
  });

  it('in all exposure, the key of A lists exactly its tools whatever the client claims', async () => {
    for (const widen of [false, true]) {
      const tools = (await names(await connect(keyA, 'all', widen))).filter((name) => name.startsWith('shared__') || name.startsWith('finance__'));
      assert.deepEqual(tools, ['shared__a_private_report', 'shared__lookup_weather'], `widen=${widen}`);
    }
  });

  it('in search exposure, search arguments naming B find nothing of B, and calling its tool is an unknown tool', async () => {
    const client = await connect(keyA, 'search', true);
    const text = await searchText(client, { orgId: 'org-b', context: { orgId: 'org-b', roles: ['finance'] }, workspace: 'ws2' });
    assert.match(text, /a_private_report/, 'A finds its own report (the search works)');
    assert.doesNotMatch(text, /b_private_report|wire_money/);
    assert.ok(!(await names(client)).some((name) => name.includes('b_private_report') || name.startsWith('finance__')));
    for (const call of [
      () => client.callTool({ name: 'shared__b_private_report', arguments: {} }),
      () => client.callTool({ name: 'call_tool', arguments: { name: 'finance__wire_money', arguments: {}, orgId: 'org-b' } }),
    ]) {
      const outcome = await call().then(
        (result) => ({ isError: result.isError === true, text: JSON.stringify(result.content) }),
        (error: unknown) => ({ isError: true, text: error instanceof McpError ? `${error.code} ${error.message}` : String(error) }),
      );
      assert.ok(outcome.isError, outcome.text);
      assert.match(outcome.text, new RegExp(`${ErrorCode.InvalidParams}|[Uu]nknown tool|not found`), outcome.text);
    }
  });
});
