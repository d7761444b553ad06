/**
 * The gateway over real Streamable HTTP with the MCP SDK client, on the local test backend
 * with real fixture servers: search binds tools and announces them, calls are proxied,
 * errors mapped per STYLE.md, outcomes recorded, organisations isolated, sessions cleaned.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { allText, firstText, startHttpHarness, type HttpHarness } from './helpers.ts';
import { createMcpHttpHandler } from '../../src/gateway/http.ts';
import type { SessionIdentity } from '../../src/gateway/backend.ts';

describe('gateway over Streamable HTTP', () => {
  let harness: HttpHarness;
  before(async () => {
    harness = await startHttpHarness();
  });
  after(async () => {
    await harness.close();
  });

  test('search mode lists meta-tools and always tools only, never silent ones', async () => {
    const { client, close } = await harness.connect();
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name).sort();
    assert.deepEqual(names, ['call_tool', 'memory__remember', 'search_tools']);
    const search = tools.find((tool) => tool.name === 'search_tools')!;
    assert.match(search.description ?? '', /Billing \(3 tools, data\)/);
    assert.doesNotMatch(search.description ?? '', /Audit|Globex/);
    await close();
  });

  test('search → list_changed → call → result, and the outcome is recorded', async () => {
    const { client, listChanged, close } = await harness.connect();
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'create an invoice for a customer', limit: 2 } });
    const payload = JSON.parse(firstText(found)) as { tools: Array<{ name: string; inputSchema: unknown; tokens: number }> };
    assert.equal(payload.tools[0]!.name, 'billing__create_invoice');
    assert.ok(payload.tools[0]!.tokens > 10);
    assert.ok(payload.tools[0]!.inputSchema);
    await listChanged.waitFor(1);
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(listed.includes('billing__create_invoice'));
    const result = await client.callTool({ name: 'billing__create_invoice', arguments: { customer: 'c-9', amount: 12 } });
    assert.equal(firstText(result), 'invoice created for c-9: 12');
    await close();
    const search = harness.backend.searches.at(-1)!;
    const outcome = harness.backend.outcomes.find((entry) => entry.eventId === search.eventId);
    assert.deepEqual(outcome, { eventId: search.eventId, toolsCalled: ['billing__create_invoice'], success: true });
    assert.ok(harness.backend.calls.some((call) => call.qualifiedName === 'billing__create_invoice' && call.success));
  });
});

describe('gateway errors, proxying and isolation over HTTP', () => {
  let harness: HttpHarness;
  before(async () => {
    harness = await startHttpHarness();
  });
  after(async () => {
    await harness.close();
  });

  async function searchAndBind(client: import('@modelcontextprotocol/sdk/client/index.js').Client, query: string, limit = 5) {
    return JSON.parse(firstText(await client.callTool({ name: 'search_tools', arguments: { query, limit } }))) as Record<string, unknown> & {
      tools: Array<{ name: string }>;
    };
  }

  test('unknown tool and bad arguments are InvalidParams; a tool not yet discovered says how to get it', async () => {
    const { client, close } = await harness.connect();
    await assert.rejects(client.callTool({ name: 'nope__nothing', arguments: {} }), (error: McpError) => error.code === ErrorCode.InvalidParams && /Unknown tool: nope__nothing$/.test(error.message));
    await assert.rejects(client.callTool({ name: 'billing__create_invoice', arguments: {} }), (error: McpError) => error.code === ErrorCode.InvalidParams && /search_tools/.test(error.message));
    await searchAndBind(client, 'create invoice');
    await assert.rejects(client.callTool({ name: 'billing__create_invoice', arguments: { customer: 'c' } }), (error: McpError) => error.code === ErrorCode.InvalidParams && /Invalid arguments.*amount/.test(error.message));
    await assert.rejects(client.callTool({ name: 'search_tools', arguments: {} }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await assert.rejects(client.callTool({ name: 'list_capabilities', arguments: {} }), (error: McpError) => error.code === ErrorCode.InvalidParams, 'capabilities meta-tools do not exist in search mode');
    await close();
  });

  test('plugin failures are isError results: an isError answer, a JSON-RPC error, a timeout', async () => {
    const { client, close } = await harness.connect();
    await searchAndBind(client, 'fail explode slow', 5);
    const failed = await client.callTool({ name: 'util__fail', arguments: {} });
    assert.equal(failed.isError, true);
    assert.match(firstText(failed), /upstream service said no/);
    const exploded = await client.callTool({ name: 'util__explode', arguments: {} });
    assert.equal(exploded.isError, true);
    assert.match(firstText(exploded), /upstream_error.*kaboom/);
    const slow = await client.callTool({ name: 'util__slow', arguments: { ms: 5000 } });
    assert.equal(slow.isError, true);
    assert.match(firstText(slow), /\(timeout\)/);
    const failures = harness.backend.calls.filter((call) => ['util__fail', 'util__explode', 'util__slow'].includes(call.qualifiedName));
    assert.ok(failures.every((call) => !call.success));
    assert.ok(failures.some((call) => call.errorCode === 'timeout'));
    await close();
  });

  test('a plugin dying mid-call gives an isError result; the gateway and the plugin come back', async () => {
    const { client, close } = await harness.connect();
    await searchAndBind(client, 'crash exits the server process', 3);
    await searchAndBind(client, 'echo message', 3);
    const pidBefore = harness.backend.pluginPid('util');
    const crashed = await client.callTool({ name: 'util__crash', arguments: {} });
    assert.equal(crashed.isError, true);
    assert.match(firstText(crashed), /exited during|unavailable/);
    const echoed = await client.callTool({ name: 'util__echo', arguments: { message: 'still here' } });
    assert.equal(firstText(echoed), 'echo: still here');
    assert.notEqual(harness.backend.pluginPid('util'), pidBefore);
    await close();
  });

  test('call_tool runs a discovered tool for clients that never refresh their list', async () => {
    const { client, close } = await harness.connect();
    await searchAndBind(client, 'refund a payment');
    const result = await client.callTool({ name: 'call_tool', arguments: { name: 'billing__refund_payment', arguments: { payment: 'p1' } } });
    assert.equal(firstText(result), 'refunded p1');
    // Issue #12: a fresh session (one per call, as the Inspector CLI does) runs a visible tool it never searched for, and binds it.
    const fresh = await harness.connect();
    assert.ok(!(await fresh.client.listTools()).tools.some((tool) => tool.name === 'billing__refund_payment'));
    const direct = await fresh.client.callTool({ name: 'call_tool', arguments: { name: 'billing__refund_payment', arguments: { payment: 'p2' } } });
    assert.equal(firstText(direct), 'refunded p2');
    assert.ok((await fresh.client.listTools()).tools.some((tool) => tool.name === 'billing__refund_payment'));
    await fresh.close();
    await assert.rejects(client.callTool({ name: 'call_tool', arguments: { name: 'search_tools', arguments: { query: 'x' } } }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await assert.rejects(client.callTool({ name: 'call_tool', arguments: { arguments: {} } }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await close();
  });

  test('two organisations see different tools; another org\'s tool is just an unknown tool', async () => {
    const acme = await harness.connect({ orgId: 'acme' });
    const globex = await harness.connect({ orgId: 'globex' });
    const globexFound = await searchAndBind(globex.client, 'confidential board report');
    assert.equal(globexFound.tools[0]!.name, 'globex__create_secret_report');
    const report = await globex.client.callTool({ name: 'globex__create_secret_report', arguments: { quarter: 'Q1' } });
    assert.equal(firstText(report), 'board report created');
    const acmeFound = await searchAndBind(acme.client, 'confidential board report');
    assert.ok(acmeFound.tools.every((tool) => !tool.name.startsWith('globex__')));
    const acmeDescription = (await acme.client.listTools()).tools.find((tool) => tool.name === 'search_tools')!.description ?? '';
    const globexDescription = (await globex.client.listTools()).tools.find((tool) => tool.name === 'search_tools')!.description ?? '';
    assert.doesNotMatch(acmeDescription, /Globex/);
    assert.match(globexDescription, /Globex reports/);
    let direct: McpError | undefined;
    let missing: McpError | undefined;
    await acme.client.callTool({ name: 'globex__create_secret_report', arguments: { quarter: 'Q1' } }).catch((error: McpError) => (direct = error));
    await acme.client.callTool({ name: 'globex__does_not_exist', arguments: {} }).catch((error: McpError) => (missing = error));
    assert.equal(direct?.code, ErrorCode.InvalidParams);
    assert.equal(direct?.message.replace('create_secret_report', 'X'), missing?.message.replace('does_not_exist', 'X'), 'same answer as for a tool that does not exist');
    await assert.rejects(acme.client.callTool({ name: 'call_tool', arguments: { name: 'globex__create_secret_report', arguments: { quarter: 'Q1' } } }), /Unknown tool: globex__create_secret_report$/);
    assert.equal(await harness.backend.getTool({ ...globexFound, workspace: 'default', project: null, orgId: 'acme', userId: null, roles: [], tier: null, sessionId: 's' }, 'globex__create_secret_report'), undefined);
    await acme.close();
    await globex.close();
  });

  test('an expert allow-list restricts search to the allowed tools (seed 004 §9.2)', async () => {
    const { client, close } = await harness.connect({ expertAllowList: ['billing__list_invoices'] });
    const found = await searchAndBind(client, 'create an invoice');
    assert.deepEqual(found.tools.map((tool) => tool.name), ['billing__list_invoices']);
    await close();
  });

  test('silent plugins are never listed, searched or callable', async () => {
    const { client, close } = await harness.connect({ exposureMode: 'all' });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(!names.some((name) => name.startsWith('audit__')));
    await assert.rejects(client.callTool({ name: 'audit__query_database', arguments: { sql: 'select 1' } }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await close();
    const searcher = await harness.connect();
    const found = await searchAndBind(searcher.client, 'SQL query analytics database');
    assert.ok(found.tools.every((tool) => !tool.name.startsWith('audit__')));
    await searcher.close();
  });

  test('resources and prompts are aggregated and namespaced', async () => {
    const { client, close } = await harness.connect();
    const { resources } = await client.listResources();
    const readme = resources.find((resource) => resource.name === 'readme')!;
    assert.equal(readme.uri, `quiver://util/${encodeURIComponent('notes://util/readme')}`);
    const read = await client.readResource({ uri: readme.uri });
    assert.equal((read.contents[0] as { text: string }).text, 'readme of util');
    assert.equal(read.contents[0]!.uri, readme.uri);
    await assert.rejects(client.readResource({ uri: 'notes://util/readme' }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await assert.rejects(client.readResource({ uri: 'quiver://globex/x' }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    const { prompts } = await client.listPrompts();
    assert.ok(prompts.some((prompt) => prompt.name === 'util__greet'));
    const prompt = await client.getPrompt({ name: 'util__greet', arguments: { who: 'Ada' } });
    assert.deepEqual(prompt.messages[0]!.content, { type: 'text', text: 'Hello, Ada!' });
    await assert.rejects(client.getPrompt({ name: 'greet' }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await assert.rejects(client.getPrompt({ name: 'util__nope' }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
    await close();
  });
});

describe('Streamable HTTP transport rules', () => {
  let harness: HttpHarness;
  before(async () => {
    harness = await startHttpHarness({ plugins: [] });
  });
  after(async () => {
    await harness.close();
  });

  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  test('Host and Origin outside the allow-list are refused (DNS-rebinding protection)', async () => {
    const request = (extra: Record<string, string>) => harness.handler.handle(new Request(harness.url, { method: 'POST', headers: { ...headers, ...extra }, body: initialize }), { workspace: 'default', project: null, orgId: null, userId: null, roles: [], tier: null });
    assert.equal((await request({ host: 'evil.example:8080' })).status, 403);
    assert.equal((await request({ host: `127.0.0.1:${harness.url.port}`, origin: 'http://evil.example' })).status, 403);
    const allowed = await request({ host: `localhost:${harness.url.port}`, origin: `http://localhost:${harness.url.port}` });
    assert.equal(allowed.status, 200);
    await allowed.body?.cancel();
  });

  test('no session id, an unknown one, or another identity\'s one is refused', async () => {
    const noSession = await fetch(harness.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal(noSession.status, 400);
    const unknown = await fetch(harness.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': 'nope' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal(unknown.status, 404);
    const { transport, close } = await harness.connect({ orgId: 'acme' });
    const sessionId = (transport as { sessionId?: string }).sessionId!;
    const hijack = await fetch(harness.url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': sessionId, 'x-test-identity': JSON.stringify({ workspace: 'default', project: null, orgId: 'globex', userId: 'u1', roles: [], tier: null }) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    assert.equal(hijack.status, 404);
    const badJson = await fetch(harness.url, { method: 'POST', headers, body: '{nope' });
    assert.equal(badJson.status, 400);
    await close();
  });

  test('POSTs start one per event-loop turn; beyond the waiting bound a POST is refused at once with 503 + Retry-After', async () => {
    const paced = createMcpHttpHandler<SessionIdentity>({ gateway: harness.gateway, resolveIdentity: (principal) => principal, pacing: { perTurn: 1, maxWaiting: 1 } });
    const identity: SessionIdentity = { workspace: 'default', project: null, orgId: null, userId: null, roles: [], tier: null };
    const post = () => paced.handle(new Request(harness.url, { method: 'POST', headers, body: initialize }), identity);
    try {
      // Same turn: the first starts, the second waits for the next turn, the third is refused.
      const [first, second, third] = await Promise.all([post(), post(), post()]);
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      assert.equal(third.status, 503);
      assert.equal(third.headers.get('retry-after'), '1');
      const body = (await third.json()) as { error: { code: number; message: string } };
      assert.match(body.error.message, /overloaded/);
      await Promise.all([first.body?.cancel(), second.body?.cancel()]);
      assert.equal(paced.sessionCount, 2);
      // Once the turn has passed, a POST is taken again.
      const later = await post();
      assert.equal(later.status, 200);
      await later.body?.cancel();
    } finally {
      await paced.close();
    }
  });

  test('DELETE ends the session and frees it', async () => {
    const before = harness.handler.sessionCount;
    const { client, transport } = await harness.connect();
    assert.equal(harness.handler.sessionCount, before + 1);
    assert.equal(harness.gateway.sessionCount, before + 1);
    await (transport as import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport).terminateSession();
    await client.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(harness.handler.sessionCount, before);
    assert.equal(harness.gateway.sessionCount, before);
  });
});
