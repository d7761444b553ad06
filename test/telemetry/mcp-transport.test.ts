/**
 * `observeMcpTransport` on a real MCP SDK server and client (in-memory transport pair): every
 * request is timed by method, tool kind and outcome whether the transport is wrapped before or
 * after the server connects, plugin tool names never become label values, and a request the
 * server never answers does not stay pending forever (bounded map).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { MetricsRegistry } from '../../src/telemetry/metrics/registry.ts';
import { declareQuiverMetrics } from '../../src/telemetry/quiver-metrics.ts';
import { observeMcpTransport } from '../../src/telemetry/mcp-transport.ts';
import { renderPrometheus } from '../../src/telemetry/metrics/exposition.ts';
import { histogramSeries, parsePrometheus, family, total } from './prometheus.ts';

async function session(order: 'before-connect' | 'after-connect') {
  const registry = new MetricsRegistry();
  const instruments = declareQuiverMetrics(registry);
  const server = new McpServer({ name: 'observed', version: '1.0.0' });
  server.registerTool('search_tools', { description: 'search' }, async () => ({ content: [{ type: 'text', text: 'found' }] }));
  server.registerTool('acme__broken', { description: 'fails' }, async () => ({ isError: true, content: [{ type: 'text', text: 'no' }] }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const observer = { mcpRequests: instruments.mcpRequests, searches: instruments.searches, errors: instruments.errors, metaTools: new Set(['search_tools']), searchTool: 'search_tools' };
  if (order === 'before-connect') observeMcpTransport(serverSide, observer, 's1');
  await server.connect(serverSide);
  if (order === 'after-connect') observeMcpTransport(serverSide, observer, 's1');
  const client = new Client({ name: 'c', version: '1' });
  await client.connect(clientSide);
  return { registry, client, close: () => client.close() };
}

describe('observeMcpTransport', () => {
  for (const order of ['before-connect', 'after-connect'] as const) {
    it(`times each request by method, tool kind and outcome (wrapped ${order})`, async () => {
      const { registry, client, close } = await session(order);
      try {
        await client.callTool({ name: 'search_tools', arguments: {} });
        await client.callTool({ name: 'search_tools', arguments: {} });
        await client.callTool({ name: 'acme__broken', arguments: {} });
        await client.callTool({ name: 'acme__missing', arguments: {} }).catch(() => undefined);
        await client.listTools();
      } finally {
        await close();
      }
      const text = renderPrometheus(registry.snapshot());
      assert.equal(histogramSeries(text, 'quiver_mcp_request_duration_seconds', { method: 'tools/call', tool: 'search_tools', outcome: 'success' }).count, 2);
      assert.equal(histogramSeries(text, 'quiver_search_duration_seconds', { outcome: 'success' }).count, 2);
      assert.equal(histogramSeries(text, 'quiver_mcp_request_duration_seconds', { method: 'tools/list', outcome: 'success' }).count, 1);
      // A failing tool and an unknown one (the SDK answers that with a tool error, or a JSON-RPC
      // error in other versions): both counted, both under 'plugin'.
      const failed = ['tool_error', 'error'].reduce((sum, outcome) => sum + histogramSeries(text, 'quiver_mcp_request_duration_seconds', { method: 'tools/call', tool: 'plugin', outcome }).count, 0);
      assert.equal(failed, 2);
      assert.doesNotMatch(text, /acme__/, 'plugin tool names never become label values');
      const errors = family(parsePrometheus(text), 'quiver_errors_total');
      assert.ok(total(errors, { source: 'mcp' }) >= 2);
    });
  }

  it('wrapping twice records once; unknown methods are not label values', async () => {
    const registry = new MetricsRegistry();
    const instruments = declareQuiverMetrics(registry);
    const transport: { onmessage?: (message: unknown) => void; send(message: unknown): Promise<void> } = { send: async () => {} };
    const observer = { mcpRequests: instruments.mcpRequests, searches: instruments.searches, errors: instruments.errors, metaTools: new Set<string>(), searchTool: 'search_tools' };
    observeMcpTransport(transport as never, observer);
    observeMcpTransport(transport as never, observer);
    transport.onmessage = () => {};
    transport.onmessage({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    // A method a client makes up is reported as 'other', never by its name.
    transport.onmessage({ jsonrpc: '2.0', id: 2, method: 'made/up-method-1234' });
    await transport.send({ jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'no' } });
    const text = renderPrometheus(registry.snapshot());
    assert.equal(histogramSeries(text, 'quiver_mcp_request_duration_seconds', { method: 'ping' }).count, 1);
    assert.equal(histogramSeries(text, 'quiver_mcp_request_duration_seconds', { method: 'other', outcome: 'error' }).count, 1);
    assert.doesNotMatch(text, /made\/up/);
  });
  it('writes the answer before measuring it (issue #28: the histograms are not on the client\'s wait)', async () => {
    const order: string[] = [];
    const histogram = { observe: () => order.push('observe') };
    const observer = { mcpRequests: histogram, searches: histogram, errors: { inc: () => order.push('inc') }, metaTools: new Set(['search_tools']), searchTool: 'search_tools' } as unknown as Parameters<typeof observeMcpTransport>[1];
    const transport = {
      onmessage: undefined as ((message: never) => void) | undefined,
      send: async (_message: never) => {
        order.push('send');
      },
    };
    observeMcpTransport(transport, observer);
    transport.onmessage = () => undefined;
    transport.onmessage!({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search_tools' } } as never);
    await transport.send({ jsonrpc: '2.0', id: 7, result: { content: [] } } as never);
    assert.deepEqual(order, ['send', 'observe', 'observe'], 'the request was measured before its answer was handed to the transport');
  });
});
