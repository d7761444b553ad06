/**
 * @module telemetry/mcp-transport
 * Measures and traces the MCP requests of one gateway session at its transport, so the
 * gateway's handlers stay as they are: `observeMcpTransport` wraps a transport's `onmessage`
 * (a request starts) and `send` (its response goes out).
 *
 * Each request gets a SERVER span, continued from the request's own `params._meta.traceparent`
 * when the client sent one (the MCP way of carrying W3C trace context), else from the HTTP
 * request's span. The handler runs inside that span's context: the SDK calls it from a promise
 * made inside `onmessage`, so AsyncLocalStorage carries the span down to the selection and the
 * plugin call. When the response is sent, the span ends and the request's duration lands in
 * `quiver_mcp_request_duration_seconds` (and `quiver_search_duration_seconds` for search_tools).
 */
import { context, trace, type Span } from '@opentelemetry/api';
import type { Histogram, Counter } from './metrics/registry.ts';
import { SpanKind, TRACER_NAME, carrierFrom, continueTrace, markFailed, tracingActive } from './tracing/spans.ts';
import { QUIVER_VERSION } from '../core/version.ts';

/** The slice of an MCP transport this wraps (the SDK's `Transport`). */
export interface ObservableTransport {
  onmessage?: ((message: never, extra?: never) => void) | undefined;
  send(message: never, options?: never): Promise<void>;
}

/** Where the measurements go. */
export interface McpRequestObserver {
  mcpRequests: Histogram;
  searches: Histogram;
  errors: Counter;
  /** Meta-tool names, reported as such; any other tool is reported as `plugin` (tool names are unbounded). */
  metaTools: ReadonlySet<string>;
  /** The search meta-tool, also timed in `quiver_search_duration_seconds`. */
  searchTool: string;
}

interface Pending {
  startedAt: number;
  method: string;
  tool: string | undefined;
  span: Span | undefined;
}

/** MCP request methods reported by name; any other method a client sends is reported as `other`. */
const KNOWN_METHODS = new Set([
  'initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list',
  'resources/subscribe', 'resources/unsubscribe', 'prompts/list', 'prompts/get', 'completion/complete', 'logging/setLevel',
  'tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel',
  // 2026-07-28 (issue #24).
  'server/discover', 'subscriptions/listen', 'tasks/update',
]);

/** Requests waiting for a response are bounded: a request never answered must not leak. */
const MAX_PENDING = 1_000;

interface JsonRpcLike {
  id?: string | number;
  method?: string;
  params?: { name?: unknown; _meta?: unknown };
  result?: { isError?: unknown };
  error?: { code?: unknown };
}

function outcomeOf(message: JsonRpcLike): { outcome: string; code?: string } {
  if (message.error) return { outcome: 'error', code: typeof message.error.code === 'number' ? `jsonrpc_${message.error.code}` : 'internal' };
  if (message.result?.isError === true) return { outcome: 'tool_error', code: 'tool_error' };
  return { outcome: 'success' };
}

const observed = new WeakSet<object>();

/**
 * Wraps a transport, before or after the server connects to it (`onmessage` is wrapped now if
 * set, and whenever it is set later); `sessionId` becomes a span attribute. Wrapping the same
 * transport twice does nothing.
 */
export function observeMcpTransport(transport: ObservableTransport, observer: McpRequestObserver, sessionId?: string): void {
  if (observed.has(transport)) return;
  observed.add(transport);
  const pending = new Map<string | number, Pending>();
  type Receive = (message: JsonRpcLike, extra?: unknown) => void;
  const wrap = (receive: Receive | undefined): Receive | undefined => receive && ((message, extra) => received(observer, pending, receive, message, extra, sessionId));
  let handler = wrap(transport.onmessage as Receive | undefined);
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => handler,
    set: (receive: Receive | undefined) => {
      handler = wrap(receive);
    },
  });
  const send = transport.send.bind(transport) as (message: JsonRpcLike, options?: unknown) => Promise<void>;
  (transport as { send: unknown }).send = (message: JsonRpcLike, options?: unknown) => {
    const id = message.id;
    const request = id === undefined || message.method !== undefined ? undefined : pending.get(id);
    if (request === undefined) return send(message, options);
    pending.delete(id!);
    // The answer goes out first (on stdio its write happens inside send), then it is measured:
    // the histograms and the span's end are not on the client's wait (issue #28). send() of the
    // SDK transports reports a failure through its promise, so nothing it throws is skipped.
    const sent = send(message, options);
    finish(observer, request, message);
    return sent;
  };
}

/** A message arrives: a request starts its clock (and span), then the SDK's handler runs in that span. */
function received(observer: McpRequestObserver, pending: Map<string | number, Pending>, receive: (message: JsonRpcLike, extra?: unknown) => void, message: JsonRpcLike, extra: unknown, sessionId: string | undefined): void {
  if (typeof message.method !== 'string' || message.id === undefined) return receive(message, extra);
  const method = KNOWN_METHODS.has(message.method) ? message.method : 'other';
  const name = method === 'tools/call' && typeof message.params?.name === 'string' ? message.params.name : undefined;
  const tool = name === undefined ? undefined : observer.metaTools.has(name) ? name : 'plugin';
  if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value!);
  if (!tracingActive()) {
    pending.set(message.id, { startedAt: performance.now(), method, tool, span: undefined });
    return receive(message, extra);
  }
  const parent = continueTrace(carrierFrom(message.params?._meta));
  const attributes = { 'mcp.method.name': method, 'jsonrpc.request.id': String(message.id), ...(name ? { 'gen_ai.tool.name': name } : {}), ...(sessionId ? { 'mcp.session.id': sessionId } : {}) };
  const span = trace.getTracer(TRACER_NAME, QUIVER_VERSION).startSpan(name === undefined ? method : `${method} ${name}`, { kind: SpanKind.SERVER, attributes }, parent);
  pending.set(message.id, { startedAt: performance.now(), method, tool, span });
  context.with(trace.setSpan(parent, span), () => receive(message, extra));
}

function finish(observer: McpRequestObserver, request: Pending, response: JsonRpcLike): void {
  const seconds = (performance.now() - request.startedAt) / 1000;
  const { outcome, code } = outcomeOf(response);
  observer.mcpRequests.observe({ method: request.method, tool: request.tool ?? '', outcome }, seconds);
  if (request.tool === observer.searchTool) observer.searches.observe({ outcome }, seconds);
  if (code) observer.errors.inc({ source: 'mcp', code });
  if (request.span) {
    request.span.setAttribute('mcp.outcome', outcome);
    if (outcome !== 'success') markFailed(request.span, { code });
    request.span.end();
  }
}

/**
 * Issue #24: one 2026-07-28 request, measured at the HTTP front from its `Mcp-Method` /
 * `Mcp-Name` headers (there is no session transport to wrap): the method label, the tool
 * (meta-tool name or `plugin`), and the outcome from the HTTP status (a JSON-RPC error inside a
 * 200 counts as success here: the body is not read).
 */
export function observeMcpExchange(observer: McpRequestObserver, exchange: { method: string; toolName: string | undefined; seconds: number; status: number }): void {
  const method = KNOWN_METHODS.has(exchange.method) ? exchange.method : 'other';
  const tool = method !== 'tools/call' || exchange.toolName === undefined ? '' : observer.metaTools.has(exchange.toolName) ? exchange.toolName : 'plugin';
  const outcome = exchange.status < 400 ? 'success' : 'error';
  observer.mcpRequests.observe({ method, tool, outcome }, exchange.seconds);
  if (tool === observer.searchTool) observer.searches.observe({ outcome }, exchange.seconds);
  if (outcome === 'error') observer.errors.inc({ source: 'mcp', code: `http_${exchange.status}` });
}
