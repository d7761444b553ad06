/**
 * @module telemetry
 * What operators watch (issue #16): Prometheus metrics, OpenTelemetry traces and readiness.
 * `createTelemetry` assembles the parts — the metrics registry with Quiver's instruments
 * (`quiver-metrics.ts`) and their scrape-time sources (`collectors.ts`), readiness
 * (`readiness.ts`), and the tracing SDK when an OTLP endpoint is configured
 * (`tracing/setup.ts`). The other parts hook in through seams: the supervisor's call events
 * (`recordToolCall`), the selection engine (`instrumentSelection`), each MCP session's
 * transport (`mcpObserver`), and the HTTP API (`observeHttp`, `renderMetrics`, `readiness`).
 *
 * @example
 * const telemetry = await createTelemetry({ settings: config.telemetry, db, logger });
 * telemetry.watch({ supervisor, caches: () => engine.cacheStats() });
 * const text = telemetry.renderMetrics(); // what GET /metrics serves
 */
import type { Logger } from '../core/logger.ts';
import type { Queryable } from '../store/database.ts';
import { loadMigrations } from '../store/migrator.ts';
import type { SelectionEngine } from '../selection/index.ts';
import { MetricsRegistry } from './metrics/registry.ts';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from './metrics/exposition.ts';
import { declareQuiverMetrics, errorCodeOf, type QuiverInstruments } from './quiver-metrics.ts';
import { collectFrom, collectProcess, type MetricSources } from './collectors.ts';
import { createReadiness, type Readiness } from './readiness.ts';
import { instrumentSelection } from './selection.ts';
import type { McpRequestObserver } from './mcp-transport.ts';
import { startTracing, type TracingHandle, type TracingSettings } from './tracing/setup.ts';

export { PROMETHEUS_CONTENT_TYPE };
export { observeMcpExchange, observeMcpTransport, type McpRequestObserver, type ObservableTransport } from './mcp-transport.ts';
export type { Readiness, ReadinessReport } from './readiness.ts';
export type { MetricSources } from './collectors.ts';

/** Who may read `/metrics`: a key with the `metrics` (or `admin`) scope, anyone, or nobody (404). */
export type MetricsAccess = 'key' | 'open' | 'off';

/** Telemetry settings (`QUIVER_METRICS`, `QUIVER_OTLP_*` / `OTEL_*`, `QUIVER_SHUTDOWN_DRAIN_SECONDS`). */
export interface TelemetrySettings {
  metrics: MetricsAccess;
  /** Set when traces are exported; absent: tracing off, the SDK is never loaded. */
  tracing: TracingSettings | undefined;
  /** How long a stopping server answers 503 on /readyz before it stops accepting (ms). */
  drainMs: number;
}

/**
 * What the metrics read of one finished tool call: the slice of the runtime's `CallEvent`
 * they use, declared here so telemetry sits below the runtime it observes (issue #28).
 */
export interface ToolCallReading {
  pluginName: string;
  latencyMs: number;
  outcome: string;
  errorClass?: string | undefined;
}

/** The telemetry of one app. */
export interface Telemetry {
  readonly settings: TelemetrySettings;
  readonly instruments: QuiverInstruments;
  /** The Prometheus text of every metric now. */
  renderMetrics(): string;
  /** One HTTP request, as the API middleware saw it. */
  observeHttp(method: string, route: string, status: number, seconds: number, code?: string): void;
  /** One upstream tool call (the supervisor's `onCall`). */
  recordToolCall(event: ToolCallReading): void;
  /** Adds scrape-time sources; returns a function that removes the session counter it added. */
  watch(sources: MetricSources): () => void;
  /** The engine, measured and traced. */
  instrumentSelection(engine: SelectionEngine): SelectionEngine;
  /** Where a gateway session's transport reports its MCP requests (`observeMcpTransport`). */
  mcpObserver(metaTools: ReadonlySet<string>, searchTool: string): McpRequestObserver;
  readiness: Readiness;
  /** Exports queued spans now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Options of `createTelemetry`. */
export interface CreateTelemetryOptions {
  settings: TelemetrySettings;
  db: Queryable;
  logger: Logger;
}

/** Builds the telemetry of an app; starts (or joins) the tracing SDK when configured. */
export async function createTelemetry(options: CreateTelemetryOptions): Promise<Telemetry> {
  const { settings } = options;
  const registry = new MetricsRegistry();
  const instruments = declareQuiverMetrics(registry);
  const sessionCounters: Array<() => number> = [];
  registry.onCollect(() => collectProcess(instruments));
  registry.onCollect(collectFrom(instruments, { sessions: sessionCounters }));
  const tracing: TracingHandle | undefined = settings.tracing ? await startTracing(settings.tracing, options.logger) : undefined;
  const readiness = createReadiness({ db: options.db, expectedMigrations: loadMigrations().map((migration) => migration.name) });
  return {
    settings,
    instruments,
    renderMetrics: () => renderPrometheus(registry.snapshot()),
    observeHttp(method, route, status, seconds, code) {
      instruments.httpRequests.observe({ method, route, status }, seconds);
      if (status >= 500 || code !== undefined) instruments.errors.inc({ source: 'http', code: code ?? (status >= 500 ? 'internal' : `http_${status}`) });
    },
    recordToolCall(event) {
      instruments.toolCalls.observe({ plugin: event.pluginName, outcome: event.outcome }, event.latencyMs / 1000);
      if (event.outcome !== 'success') instruments.errors.inc({ source: 'tool_call', code: event.errorClass ?? event.outcome });
    },
    watch(sources) {
      const { sessions, ...rest } = sources;
      const stop = registry.onCollect(collectFrom(instruments, rest));
      for (const counter of sessions ?? []) sessionCounters.push(counter);
      return () => {
        stop();
        for (const counter of sessions ?? []) {
          const index = sessionCounters.indexOf(counter);
          if (index >= 0) sessionCounters.splice(index, 1);
        }
      };
    },
    instrumentSelection: (engine) => instrumentSelection(engine, instruments),
    mcpObserver: (metaTools, searchTool) => ({ mcpRequests: instruments.mcpRequests, searches: instruments.searches, errors: instruments.errors, metaTools, searchTool }),
    readiness,
    flush: async () => tracing?.flush(),
    close: async () => tracing?.shutdown(),
  };
}

export { errorCodeOf };
