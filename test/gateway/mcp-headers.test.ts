/**
 * Issue #24: a 2026-07-28 request's `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` headers on the
 * in-process HTTP gateway with real fixture MCP servers. A `tools/call` whose header target the
 * principal may not call (another organisation's tool, an unknown one) is refused with 403 from
 * the headers alone (even with a body that is not JSON, so before the body is parsed), directly
 * and through `call_tool`'s `Mcp-Param-Tool-Name`; a header that disagrees with the body is still
 * -32020; the client's other `Mcp-Param-*` headers reach the plugin call (and Quiver's own
 * `Tool-Name` does not); requests are counted in the metrics under their header method. A
 * `prompts/get` / `resources/read` whose `Mcp-Name` names another organisation's plugin, or no
 * plugin, is refused the same way, with one answer for both.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { currentForwardedHeaders } from '../../src/core/forwarded-headers.ts';
import { createMcpHttpHandler, type McpHttpHandler } from '../../src/gateway/http.ts';
import type { SessionIdentity } from '../../src/gateway/backend.ts';
import { META_TOOL_NAMES, SEARCH_TOOLS } from '../../src/gateway/meta-tools.ts';
import { MetricsRegistry } from '../../src/telemetry/metrics/registry.ts';
import { renderPrometheus } from '../../src/telemetry/metrics/exposition.ts';
import { declareQuiverMetrics } from '../../src/telemetry/quiver-metrics.ts';
import { formatResourceUri } from '../../src/gateway/meta-tools.ts';
import { identity, standardPlugins, startHttpHarness, type HttpHarness } from './helpers.ts';

const MODERN = '2026-07-28';

describe('2026-07-28 request headers: authorization, forwarding, metrics (issue #24)', { timeout: 120_000 }, () => {
  let harness: HttpHarness;
  let handler: McpHttpHandler<SessionIdentity>;
  let registry: MetricsRegistry;
  const seen: Array<{ tool: string; forwarded: Record<string, string> }> = [];

  before(async () => {
    // Globex (another organisation's plugin) serves a prompt and a resource too, so hiding them is the grant's doing.
    const plugins = standardPlugins().map((plugin) => (plugin.name === 'globex' ? { ...plugin, args: [...(plugin.args ?? []), '--resources', '--prompts'] } : plugin));
    harness = await startHttpHarness({ plugins });
    // Record what the backend's call sees of the request's forwarded headers (its async context).
    const callTool = harness.backend.callTool.bind(harness.backend);
    harness.backend.callTool = async (session, name, args, options) => {
      seen.push({ tool: name, forwarded: { ...currentForwardedHeaders() } });
      return callTool(session, name, args, options);
    };
    registry = new MetricsRegistry();
    const instruments = declareQuiverMetrics(registry);
    handler = createMcpHttpHandler<SessionIdentity>({
      gateway: harness.gateway,
      resolveIdentity: (principal) => principal,
      observer: { mcpRequests: instruments.mcpRequests, searches: instruments.searches, errors: instruments.errors, metaTools: META_TOOL_NAMES, searchTool: SEARCH_TOOLS },
    });
  });
  after(async () => {
    await handler?.close();
    await harness?.close();
  });

  async function post(params: { name: string; arguments?: unknown }, headers: Record<string, string>, body?: string) {
    const json = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
    };
    const response = await handler.handle(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': params.name, ...headers },
        body: body ?? JSON.stringify(json),
      }),
      identity(),
    );
    const raw = await response.text();
    const payload = raw.startsWith('{') ? raw : (raw.split('\n').find((line) => line.startsWith('data: ')) ?? 'data: {}').slice(6);
    return { status: response.status, message: JSON.parse(payload) as { result?: { content?: Array<{ text?: string }> }; error?: { code: number; message: string } } };
  }

  /** A 2026-07-28 request of any method, its `Mcp-Name` given. */
  async function send(method: string, params: Record<string, unknown>, name: string, body?: string) {
    const json = {
      jsonrpc: '2.0',
      id: 4,
      method,
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
    };
    const response = await handler.handle(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': method, 'mcp-name': name },
        body: body ?? JSON.stringify(json),
      }),
      identity(),
    );
    const raw = await response.text();
    const payload = raw.startsWith('{') ? raw : (raw.split('\n').find((line) => line.startsWith('data: ')) ?? 'data: {}').slice(6);
    return { status: response.status, message: JSON.parse(payload) as { result?: { messages?: unknown[]; contents?: Array<{ uri: string; text?: string }> }; error?: { code: number; message: string } } };
  }

  it("refuses another organisation's prompt and resource, and unknown ones, from the headers; visible ones are served", async () => {
    const getPrompt = (name: string, body?: string) => send('prompts/get', { name, arguments: { who: 'Ada' } }, name, body);
    const allowed = await getPrompt('util__greet');
    assert.equal(allowed.status, 200, JSON.stringify(allowed.message));
    assert.equal(allowed.message.error, undefined, JSON.stringify(allowed.message));
    assert.ok((allowed.message.result?.messages ?? []).length > 0);
    const hidden = await getPrompt('globex__greet');
    assert.equal(hidden.status, 403);
    assert.equal(hidden.message.error?.message, "Forbidden: prompt 'globex__greet' is unknown or not available to this credential");
    // An unknown plugin's prompt and a name that is no plugin's get the same answer as the hidden one.
    assert.equal((await getPrompt('nope__greet')).message.error?.message, "Forbidden: prompt 'nope__greet' is unknown or not available to this credential");
    // A name that is no plugin's address goes to the body's request, which answers "not found" with its id (sep-2164).
    const unaddressed = await getPrompt('greet');
    assert.notEqual(unaddressed.status, 403);
    assert.ok(unaddressed.message.error, JSON.stringify(unaddressed.message));
    assert.equal((unaddressed.message as { id?: unknown }).id, 4);
    // Refused before the body is parsed (else -32700).
    assert.equal((await getPrompt('globex__greet', '{not json')).status, 403);

    const readResource = (uri: string, body?: string) => send('resources/read', { uri }, uri, body);
    const mine = formatResourceUri('util', 'notes://util/readme');
    const read = await readResource(mine);
    assert.equal(read.status, 200, JSON.stringify(read.message));
    assert.equal(read.message.result?.contents?.[0]?.uri, mine, JSON.stringify(read.message));
    const theirs = formatResourceUri('globex', 'notes://globex/readme');
    const refused = await readResource(theirs);
    assert.equal(refused.status, 403);
    assert.equal(refused.message.error?.message, `Forbidden: resource '${theirs}' is unknown or not available to this credential`);
    const nowhere = formatResourceUri('nope', 'notes://nope/readme');
    assert.equal((await readResource(nowhere)).message.error?.message, `Forbidden: resource '${nowhere}' is unknown or not available to this credential`);
    const unaddressedUri = await readResource('notes://globex/readme');
    assert.notEqual(unaddressedUri.status, 403, 'a URI that is no plugin address is answered by the request, not the header');
    assert.ok(unaddressedUri.message.error, JSON.stringify(unaddressedUri.message));
    assert.equal((unaddressedUri.message as { id?: unknown }).id, 4);
    assert.equal(unaddressedUri.message.result, undefined, 'nothing is served');
    assert.equal((await readResource(theirs, '{not json')).status, 403);

    // The same principal of the other organisation is served both.
    const globex = { ...identity(), orgId: 'globex' };
    const response = await handler.handle(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'prompts/get', 'mcp-name': 'globex__greet' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'prompts/get', params: { name: 'globex__greet', arguments: { who: 'Ada' }, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
      }),
      globex,
    );
    assert.equal(response.status, 200, await response.clone().text());
    assert.doesNotMatch(await response.text(), /"error"/);

    // A header that disagrees with the body is still refused by the SDK entry (-32020), not served.
    const mismatch = await send('prompts/get', { name: 'util__greet', arguments: { who: 'Ada' } }, 'util__other');
    assert.equal(mismatch.status, 400, JSON.stringify(mismatch.message));
    assert.equal(mismatch.message.error?.code, -32020);
  });

  it("refuses another organisation's tool and an unknown one from the headers, before the body is read", async () => {
    const direct = await post({ name: 'globex__create_secret_report', arguments: {} }, {});
    assert.equal(direct.status, 403);
    assert.match(direct.message.error?.message ?? '', /globex__create_secret_report/);
    const through = await post({ name: 'call_tool', arguments: { name: 'globex__create_secret_report', arguments: {} } }, { 'mcp-param-tool-name': 'globex__create_secret_report' });
    assert.equal(through.status, 403);
    // The same answer for a tool that does not exist: the header does not tell them apart.
    const unknown = await post({ name: 'call_tool', arguments: { name: 'nope__nothing', arguments: {} } }, { 'mcp-param-tool-name': 'nope__nothing' });
    assert.equal(unknown.status, 403);
    assert.equal(unknown.message.error?.message, 'Forbidden: tool \'nope__nothing\' is unknown or not available to this credential');
    // Not JSON at all: refused on the headers, so the body was never parsed (else -32700).
    const unparsed = await post({ name: 'globex__create_secret_report' }, {}, '{not json');
    assert.equal(unparsed.status, 403);
    assert.equal(seen.filter((call) => call.tool.startsWith('globex')).length, 0, 'the refused tool never ran');
  });

  it('an allowed tool runs; its Mcp-Param-* headers reach the plugin call, Tool-Name does not; a mismatch is -32020', async () => {
    seen.length = 0;
    const called = await post({ name: 'call_tool', arguments: { name: 'util__echo', arguments: { message: 'hi' } } }, { 'mcp-param-tool-name': 'util__echo', 'mcp-param-region': 'eu-west' });
    assert.equal(called.status, 200, JSON.stringify(called.message));
    assert.equal(called.message.error, undefined, JSON.stringify(called.message));
    assert.deepEqual(seen, [{ tool: 'util__echo', forwarded: { 'mcp-param-region': 'eu-west' } }]);
    assert.deepEqual(currentForwardedHeaders(), {}, 'nothing leaks out of the request');

    const mismatch = await post({ name: 'call_tool', arguments: { name: 'util__add', arguments: { a: 1, b: 2 } } }, { 'mcp-param-tool-name': 'util__echo' });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.message.error?.code, -32020);
  });

  it('counts 2026-07-28 requests under their header method and tool', () => {
    const text = renderPrometheus(registry.snapshot());
    assert.match(text, /quiver_mcp_request_duration_seconds_count\{method="tools\/call",tool="call_tool",outcome="success"\} [1-9]/);
    assert.match(text, /quiver_mcp_request_duration_seconds_count\{method="tools\/call",tool="plugin",outcome="error"\} [1-9]/);
    assert.match(text, /code="http_403"\} [1-9]/);
  });
});
