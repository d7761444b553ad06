/**
 * @module telemetry/tracing/setup
 * Installs the OpenTelemetry SDK for this process when an OTLP endpoint is configured: a
 * tracer provider (parent-based sampling at the configured ratio, resource `service.name`),
 * a batch span processor exporting OTLP/HTTP JSON to `<endpoint>/v1/traces`, the
 * AsyncLocalStorage context manager (so a span started in a request handler is the parent of
 * the selection and plugin spans below it) and the W3C trace-context propagator.
 *
 * Tracing off: nothing here is imported (the SDK modules load lazily), no global is set.
 * The SDK's registrations are process-wide (that is how OpenTelemetry's API finds them), so
 * a second app in the same process shares the first one's SDK; the last `shutdown()` flushes
 * the queued spans and uninstalls it.
 */
import { context, diag, propagation, trace, DiagLogLevel } from '@opentelemetry/api';
import type { Logger } from '../../core/logger.ts';
import { QUIVER_VERSION } from '../../core/version.ts';
import { setTracingActive } from './spans.ts';

/** Where and how traces go. */
export interface TracingSettings {
  /** The full OTLP/HTTP traces URL (…/v1/traces). */
  tracesUrl: string;
  /** Extra request headers for the collector (e.g. an auth token); never logged. */
  headers: Readonly<Record<string, string>>;
  serviceName: string;
  /** Share of new root traces recorded, 0–1 (a caller's sampled flag is followed). */
  sampleRatio: number;
  /** Longest a finished span waits before it is exported (ms). */
  exportDelayMs?: number;
}

/** A running tracing SDK. */
export interface TracingHandle {
  /** Exports every finished span now. */
  flush(): Promise<void>;
  /** Flushes and, for the last user, uninstalls the SDK. Safe to call twice. */
  shutdown(): Promise<void>;
}

interface Installed {
  users: number;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

let installed: Promise<Installed> | undefined;

async function install(settings: TracingSettings, logger: Logger): Promise<Installed> {
  const [{ TracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler }, { OTLPTraceExporter }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/resources'),
    ]);
  // The SDK reports export failures through diag: route them to our logger, without payloads.
  diag.setLogger(
    {
      error: (message) => logger.warn({ part: 'tracing' }, `otel: ${message}`),
      warn: (message) => logger.warn({ part: 'tracing' }, `otel: ${message}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const exporter = new OTLPTraceExporter({ url: settings.tracesUrl, headers: { ...settings.headers } });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': QUIVER_VERSION }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: settings.exportDelayMs ?? 2_000 })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingActive(true);
  logger.info({ part: 'tracing', tracesUrl: settings.tracesUrl.replace(/\/\/[^@/]*@/, '//'), serviceName: settings.serviceName, sampleRatio: settings.sampleRatio }, 'exporting traces over OTLP/HTTP');
  return {
    users: 0,
    flush: () => provider.forceFlush(),
    async shutdown() {
      setTracingActive(false);
      await provider.shutdown().catch((error: unknown) => logger.warn({ part: 'tracing', err: error }, 'flushing traces at shutdown failed'));
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}

/** Starts (or joins) the process's tracing SDK. */
export async function startTracing(settings: TracingSettings, logger: Logger): Promise<TracingHandle> {
  const installing = (installed ??= install(settings, logger));
  const sdk = await installing.catch((error: unknown) => {
    if (installed === installing) installed = undefined;
    throw error;
  });
  sdk.users += 1;
  let stopped = false;
  return {
    flush: () => sdk.flush(),
    async shutdown() {
      if (stopped) return;
      stopped = true;
      sdk.users -= 1;
      if (sdk.users > 0) {
        await sdk.flush();
        return;
      }
      if (installed === installing) installed = undefined;
      await sdk.shutdown();
    },
  };
}
