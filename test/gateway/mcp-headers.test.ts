/**
 * Issue #24: a 2026-07-28 request's `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` headers on the
 * in-process HTTP gateway with real fixture MCP servers. A `tools/call` whose header target the
 * principal may not call (another organisation's tool, an unknown one) is refused with 403 from
 * the headers alone (even with a body that is not JSON, so before the body is parsed), directly
 * and through `call_tool`'s `Mcp-Param-Tool-Name`; a header that disagrees with the body is still
 * -32020; the client's other `Mcp-Param-*` headers reach the plugin call (and Quiver's own
 * `Tool-Name` does not); requests are counted in the metrics under their header method.
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
import { identity, startHttpHarness, type HttpHarness } from './helpers.ts';

const MODERN = '2026-07-28';

describe('2026-07-28 request headers: authorization, forwarding, metrics (issue #24)', { timeout: 120_000 }, () => {
  let harness: HttpHarness;
  let handler: McpHttpHandler<SessionIdentity>;
  let registry: MetricsRegistry;
  const seen: Array<{ tool: string; forwarded: Record<string, string> }> = [];

  before(async () => {
    harness = await startHttpHarness();
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
