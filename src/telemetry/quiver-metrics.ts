/**
 * @module telemetry/quiver-metrics
 * Quiver's metrics: what each is, its labels and how its label values stay bounded. Request,
 * MCP, search, selection and tool-call latencies are histograms in seconds; errors are counted
 * by where they happened and their Quiver error code (a closed set); plugin labels are plugin
 * names, capped at 200 series per metric (an operator installs plugins, a client cannot invent
 * them), and tool names never appear — a client's unknown tool name would otherwise make a
 * series. Nothing secret is ever a label.
 *
 * Recording is a Map lookup and a bucket scan (`registry.ts`); scrape-time sources (breakers,
 * processes, caches, sessions) are read by `collectors.ts` when `/metrics` is asked.
 */
import { QUIVER_VERSION } from '../core/version.ts';
import { LATENCY_BUCKETS_SECONDS, MetricsRegistry, type Counter, type Gauge, type Histogram } from './metrics/registry.ts';

/** Most plugins a plugin-labelled metric names before folding into `_other`. */
export const MAX_PLUGIN_SERIES = 200;

/** Selection stages, in pipeline order (the `StageTimings` keys without `total`). */
export const SELECTION_STAGES = ['policy', 'candidates', 'context', 'retrieval', 'bandit', 'pins', 'format'] as const;

/** The instruments, by what they measure. */
export interface QuiverInstruments {
  httpRequests: Histogram;
  mcpRequests: Histogram;
  searches: Histogram;
  selections: Histogram;
  selectionStages: Histogram;
  toolCalls: Histogram;
  errors: Counter;
  breakers: Gauge;
  pluginBreakerState: Gauge;
  pluginProcesses: Gauge;
  plugins: Gauge;
  cacheHits: Counter;
  cacheMisses: Counter;
  cacheEntries: Gauge;
  sessions: Gauge;
  callEventsDropped: Counter;
  processMemory: Gauge;
  processHeap: Gauge;
  processCpu: Counter;
  processStart: Gauge;
  buildInfo: Gauge;
}

/** Declares every Quiver metric on `registry`. */
export function declareQuiverMetrics(registry: MetricsRegistry): QuiverInstruments {
  const latency = (name: string, help: string, labelNames: string[], maxSeries = 500) => registry.histogram({ name, help, labelNames, maxSeries, buckets: LATENCY_BUCKETS_SECONDS });
  const instruments: QuiverInstruments = {
    httpRequests: latency('quiver_http_request_duration_seconds', 'HTTP requests to the API and /mcp by method, route pattern and status code (until the response headers are sent).', ['method', 'route', 'status']),
    mcpRequests: latency('quiver_mcp_request_duration_seconds', "MCP requests handled by the gateway, by method and tool kind (a meta-tool's name, or 'plugin' for a plugin tool), and outcome.", ['method', 'tool', 'outcome']),
    searches: latency('quiver_search_duration_seconds', 'search_tools calls through the gateway, end to end (selection, binding, marketplace fallback).', ['outcome']),
    selections: latency('quiver_selection_duration_seconds', 'Tool selections (the pipeline behind search_tools and POST /v1/select).', ['outcome']),
    selectionStages: latency('quiver_selection_stage_duration_seconds', 'Time spent in each selection stage, as the pipeline measured it.', ['stage']),
    toolCalls: latency('quiver_tool_call_duration_seconds', 'Plugin tool calls through the supervisor, by plugin and outcome (success, error, timeout, rejected).', ['plugin', 'outcome'], MAX_PLUGIN_SERIES * 4),
    errors: registry.counter({ name: 'quiver_errors_total', help: 'Errors by where they surfaced (http, mcp, tool_call, selection) and their Quiver error code.', labelNames: ['source', 'code'] }),
    breakers: registry.gauge({ name: 'quiver_circuit_breakers', help: 'Circuit breakers by scope (plugin or tool) and state (closed, open, half-open).', labelNames: ['scope', 'state'] }),
    pluginBreakerState: registry.gauge({ name: 'quiver_plugin_breaker_state', help: "1 for each plugin version's current breaker state, 0 for the others.", labelNames: ['plugin', 'state'], maxSeries: MAX_PLUGIN_SERIES * 3 }),
    pluginProcesses: registry.gauge({ name: 'quiver_plugin_processes', help: 'Live plugin processes started by this replica.' }),
    plugins: registry.gauge({ name: 'quiver_plugins', help: 'Plugin versions known to the supervisor, by state (idle, starting, running, backoff, crash-loop).', labelNames: ['state'] }),
    cacheHits: registry.counter({ name: 'quiver_cache_hits_total', help: 'Cache hits by cache.', labelNames: ['cache'] }),
    cacheMisses: registry.counter({ name: 'quiver_cache_misses_total', help: 'Cache misses by cache (hit rate = hits / (hits + misses)).', labelNames: ['cache'] }),
    cacheEntries: registry.gauge({ name: 'quiver_cache_entries', help: 'Entries held by each cache.', labelNames: ['cache'] }),
    sessions: registry.gauge({ name: 'quiver_mcp_sessions', help: 'Live MCP sessions on this replica.' }),
    callEventsDropped: registry.counter({ name: 'quiver_call_events_dropped_total', help: 'Plugin call events not stored: dropped from a full queue or lost to a failed insert.', labelNames: ['reason'] }),
    processMemory: registry.gauge({ name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.' }),
    processHeap: registry.gauge({ name: 'nodejs_heap_used_bytes', help: 'V8 heap in use, bytes.' }),
    processCpu: registry.counter({ name: 'process_cpu_seconds_total', help: 'User and system CPU time spent, seconds.' }),
    processStart: registry.gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, seconds.' }),
    buildInfo: registry.gauge({ name: 'quiver_build_info', help: 'Always 1; the version as a label.', labelNames: ['version'] }),
  };
  instruments.buildInfo.set({ version: QUIVER_VERSION }, 1);
  instruments.processStart.set(undefined, Math.round((Date.now() - process.uptime() * 1000) / 1000));
  return instruments;
}

/** The error code of anything thrown: a QuiverError's or MCP error's code, else `internal`. */
export function errorCodeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[a-z_]{1,40}$/.test(code)) return code;
  if (typeof code === 'number' && Number.isInteger(code)) return `jsonrpc_${code}`;
  return 'internal';
}
