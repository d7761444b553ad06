/**
 * Issue #16 end to end, with a real `quiver serve` process: an OTLP/HTTP receiver written
 * here gets one connected trace for an MCP client's search → call (the client's
 * `_meta.traceparent` continued through the MCP request, the selection and the plugin call),
 * the plugin receives W3C `traceparent` in its `tools/call` `_meta`, `/metrics` parses as
 * Prometheus text and moves with the traffic, `/metrics` needs a key with the `metrics`
 * scope, and `/readyz` answers 200 while serving and 503 while draining at shutdown.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startServe, stopChild } from '../helpers/cli.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.ts';
import { createMetaEchoPlugin } from './meta-echo-plugin.ts';
import { family, histogramSeries, parsePrometheus, total } from './prometheus.ts';

const SERVER_KIND = 2;
const CLIENT_KIND = 3;


function text(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

describe('quiver serve: metrics, traces and readiness', { timeout: 240_000 }, () => {
  let home: string;
  let env: Record<string, string>;
  let receiver: OtlpReceiver;
  let served: { child: ChildProcess; url: string; stderr: () => string };
  let keys: { mcp: string; metrics: string; read: string };

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-telemetry-'));
    await chmod(home, 0o755); // sandboxed plugins run as an unprivileged user
    // No background verification: it would compete with the measured traffic for the CPU.
    env = { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data'), QUIVER_VERIFY_ON_INSTALL: 'off' };
    const folder = await createMetaEchoPlugin(join(home, 'sources'), 'tracer');
    // Installed and keyed in-process (one app instead of four CLI processes), then served for real.
    const app = await createApp(loadConfig({ ...env, QUIVER_LOG_LEVEL: 'silent' }));
    try {
      await app.plugins.add(folder, { name: 'tracer' });
      const key = async (scope: 'mcp' | 'metrics' | 'read') => (await app.apiKeys.create({ name: `${scope} key`, scopes: [scope] })).key;
      keys = { mcp: await key('mcp'), metrics: await key('metrics'), read: await key('read') };
    } finally {
      await app.close();
    }
    receiver = await startOtlpReceiver();
    served = await startServe(['--http', '127.0.0.1:0'], { ...env, QUIVER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'quiver-under-test', QUIVER_SHUTDOWN_DRAIN_SECONDS: '1.5' });
  });
  after(async () => {
    if (served?.child) await stopChild(served.child);
    await receiver?.close();
    await rm(home, { recursive: true, force: true });
  });

  async function scrape(): Promise<string> {
    const response = await fetch(`${served.url}/metrics`, { headers: { authorization: `Bearer ${keys.metrics}` } });
    assert.equal(response.status, 200, await response.clone().text());
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return response.text();
  }

  it('/readyz is ready; /metrics needs the metrics scope', async () => {
    const ready = await fetch(`${served.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', ready: true, checks: { database: 'ok', migrations: 'ok', draining: false } });
    assert.equal((await fetch(`${served.url}/metrics`)).status, 401);
    assert.equal((await fetch(`${served.url}/metrics`, { headers: { authorization: `Bearer ${keys.read}` } })).status, 403);
    const families = parsePrometheus(await scrape());
    assert.equal(total(family(families, 'quiver_build_info')), 1);
    assert.ok(total(family(families, 'process_resident_memory_bytes')) > 10_000_000);
  });

  it('search → call: one connected trace, traceparent in the plugin _meta, and metrics that moved', async () => {
    const before = await scrape();
    const traceId = randomBytes(16).toString('hex');
    const agentSpanId = randomBytes(8).toString('hex');
    const _meta = { traceparent: `00-${traceId}-${agentSpanId}-01` };

    const client = new Client({ name: 'telemetry-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys.mcp}` } } }));
    let pluginMeta: { traceparent?: string };
    try {
      const search = (await client.callTool({ name: 'search_tools', arguments: { query: 'echo the request metadata for tracing', limit: 3 }, _meta })) as CallToolResult;
      assert.ok(!search.isError, text(search));
      assert.match(text(search), /tracer__echo_meta/);
      const echoed = (await client.callTool({ name: 'tracer__echo_meta', arguments: {}, _meta })) as CallToolResult;
      assert.ok(!echoed.isError, text(echoed));
      pluginMeta = JSON.parse(text(echoed)) as { traceparent?: string };
      const failed = (await client.callTool({ name: 'tracer__fail', arguments: {}, _meta })) as CallToolResult;
      assert.equal(failed.isError, true);
    } finally {
      await client.close();
    }

    // The plugin got W3C trace context in _meta: our trace, with Quiver's plugin-call span as parent.
    const sent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(pluginMeta.traceparent ?? '');
    assert.ok(sent, `traceparent in the plugin's _meta: ${JSON.stringify(pluginMeta)}`);
    assert.equal(sent[1], traceId);
    assert.notEqual(sent[2], agentSpanId);

    // Metrics moved with the traffic.
    const after = await scrape();
    const families = parsePrometheus(after);
    const searchBefore = histogramSeries(before, 'quiver_search_duration_seconds', { outcome: 'success' }).count;
    assert.equal(histogramSeries(after, 'quiver_search_duration_seconds', { outcome: 'success' }).count, searchBefore + 1);
    assert.equal(histogramSeries(after, 'quiver_mcp_request_duration_seconds', { method: 'tools/call', tool: 'plugin', outcome: 'success' }).count, 1);
    assert.equal(histogramSeries(after, 'quiver_mcp_request_duration_seconds', { method: 'tools/call', tool: 'plugin', outcome: 'tool_error' }).count, 1);
    assert.ok(histogramSeries(after, 'quiver_selection_duration_seconds', { outcome: 'success' }).count >= 1);
    assert.ok(histogramSeries(after, 'quiver_selection_stage_duration_seconds', { stage: 'retrieval' }).count >= 1);
    assert.equal(histogramSeries(after, 'quiver_tool_call_duration_seconds', { plugin: 'tracer', outcome: 'success' }).count, 1);
    assert.equal(histogramSeries(after, 'quiver_tool_call_duration_seconds', { plugin: 'tracer', outcome: 'error' }).count, 1);
    assert.ok(histogramSeries(after, 'quiver_http_request_duration_seconds', { method: 'POST', route: '/mcp', status: '200' }).count > histogramSeries(before, 'quiver_http_request_duration_seconds', { method: 'POST', route: '/mcp', status: '200' }).count);
    assert.equal(total(family(families, 'quiver_errors_total'), { source: 'tool_call', code: 'tool_error' }), 1);
    assert.ok(total(family(families, 'quiver_plugin_processes')) >= 1, 'the plugin process is counted');
    assert.equal(total(family(families, 'quiver_plugin_breaker_state'), { plugin: 'tracer', state: 'closed' }), 1);
    assert.ok(total(family(families, 'quiver_cache_hits_total')) + total(family(families, 'quiver_cache_misses_total')) > 0);
    assert.ok(total(family(families, 'quiver_cache_misses_total'), { cache: 'launchSpecs' }) >= 1, 'the backend caches are counted');
    assert.equal(family(families, 'quiver_mcp_sessions').type, 'GAUGE');

    // Shutdown drains: /readyz turns 503 while the server still answers, then spans are flushed.
    const stopping = stopChild(served.child);
    let drainingStatus = 0;
    for (let attempt = 0; attempt < 40 && drainingStatus !== 503; attempt++) {
      drainingStatus = (await fetch(`${served.url}/readyz`).catch(() => ({ status: -1 }))).status;
      if (drainingStatus !== 503) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal(drainingStatus, 503, 'readyz answers 503 while draining');
    assert.equal((await stopping), 0, served.stderr());

    const ours = receiver.spans.filter((span) => span.traceId === traceId);
    assertConnectedTrace(ours, agentSpanId, sent[2]!);
    assert.deepEqual(receiver.rejected, []);
  });
});

/** One trace rooted at the agent's span: every span's parent is the agent's span or another span of it. */
function assertConnectedTrace(spans: ReceivedSpan[], agentSpanId: string, pluginParentSpanId: string): void {
  const names = spans.map((span) => span.name).sort();
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) {
    assert.ok(span.parentSpanId === agentSpanId || ids.has(span.parentSpanId ?? ''), `${span.name} hangs off the trace (parent ${span.parentSpanId}); spans: ${names.join(', ')}`);
    assert.equal(span.serviceName, 'quiver-under-test');
  }
  const search = spans.find((span) => span.name === 'tools/call search_tools');
  assert.ok(search && search.kind === SERVER_KIND && search.parentSpanId === agentSpanId, `search span: ${names.join(', ')}`);
  const selection = spans.find((span) => span.name === 'selection');
  assert.ok(selection && ids.has(selection.parentSpanId ?? ''), 'a selection span under the search');
  assert.ok(spans.some((span) => span.name === 'selection.retrieval' && span.parentSpanId === selection.spanId), 'retrieval under the selection');
  const proxied = spans.find((span) => span.name === 'tools/call tracer__echo_meta');
  assert.ok(proxied && proxied.kind === SERVER_KIND && proxied.parentSpanId === agentSpanId, `gateway span of the call: ${names.join(', ')}`);
  const pluginCall = spans.find((span) => span.name === 'tools/call echo_meta');
  assert.ok(pluginCall && pluginCall.kind === CLIENT_KIND, `plugin call span: ${names.join(', ')}`);
  assert.equal(pluginCall.spanId, pluginParentSpanId, "the plugin's traceparent names the plugin-call span");
  let ancestor: ReceivedSpan | undefined = pluginCall;
  while (ancestor && ancestor.spanId !== proxied.spanId) ancestor = spans.find((span) => span.spanId === ancestor!.parentSpanId);
  assert.ok(ancestor, 'the plugin call descends from the gateway tools/call span');
}
