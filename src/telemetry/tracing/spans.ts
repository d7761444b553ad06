/**
 * @module telemetry/tracing/spans
 * How Quiver's parts make spans and carry W3C trace context, through the OpenTelemetry API
 * only: as OpenTelemetry intends for instrumented code, the parts use the API and the process
 * entry installs the SDK (`setup.ts`). Until it does, every helper here is a pass-through that
 * allocates no span (`tracingActive()` is false), so an untraced server pays one boolean test.
 *
 * Trace context travels as W3C `traceparent` / `tracestate`: in from HTTP headers and from an
 * MCP request's `params._meta` (a client's `_meta` wins over the HTTP header: it names the
 * caller's own span), and out in the `_meta` of the `tools/call` sent to a plugin.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { QUIVER_VERSION } from '../../core/version.ts';

export { SpanKind };
export type { Span };

/** The instrumentation scope name of every Quiver span. */
export const TRACER_NAME = 'quiver';

let active = false;

/** Marks whether an SDK is installed (set by `setup.ts` only). */
export function setTracingActive(value: boolean): void {
  active = value;
}

/** True while an SDK records spans in this process. */
export function tracingActive(): boolean {
  return active;
}

/** W3C trace-context fields as carried in headers or an MCP `_meta`. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** What a span is started with. */
export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent context (default: the active one). */
  parent?: Context;
}

/**
 * Runs `work` inside a new active span, ends it when `work` settles, and marks it as an error
 * when `work` throws (the error is rethrown unchanged). Untraced: just runs `work`.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!active) return work(undefined);
  const parent = options.parent ?? context.active();
  const span = trace.getTracer(TRACER_NAME, QUIVER_VERSION).startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Records an error on a span (its code as an attribute, its message as the status). */
export function markFailed(span: Span | undefined, error: unknown): void {
  if (!span) return;
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== undefined) span.setAttribute('error.type', String(code));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 200) : 'error' });
}

/** Picks the W3C fields out of an untrusted carrier (an MCP `_meta`, a header bag); undefined when none. */
export function carrierFrom(source: unknown): TraceCarrier | undefined {
  if (source === null || typeof source !== 'object') return undefined;
  const { traceparent, tracestate } = source as Record<string, unknown>;
  if (typeof traceparent !== 'string' || traceparent.length > 128) return undefined;
  return typeof tracestate === 'string' && tracestate.length <= 512 ? { traceparent, tracestate } : { traceparent };
}

/**
 * The context a request continues: `carrier`'s trace when it holds a valid `traceparent`,
 * else `base` (default: the active context). A malformed `traceparent` is ignored (W3C §3.2.4).
 */
export function continueTrace(carrier: TraceCarrier | undefined, base: Context = context.active()): Context {
  if (!active || !carrier?.traceparent) return base;
  const extracted = propagation.extract(ROOT_CONTEXT, carrier);
  return trace.getSpanContext(extracted) ? propagation.extract(base, carrier) : base;
}

/** The active span's W3C fields, to put in an outgoing MCP request's `_meta`; undefined when untraced. */
export function outgoingTraceMeta(): TraceCarrier | undefined {
  if (!active) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? (carrier as TraceCarrier) : undefined;
}

/**
 * MCP request params with the active span's W3C fields added to `_meta` (any `_meta` they
 * carry is kept; trace fields win). Untraced: the params themselves, unchanged.
 */
export function withTraceMeta<P extends object>(params: P): P {
  const meta = outgoingTraceMeta();
  if (!meta) return params;
  const existing = (params as { _meta?: Record<string, unknown> })._meta;
  return { ...params, _meta: { ...existing, ...meta } };
}
