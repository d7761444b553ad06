/**
 * @module gateway/adaptive-transport
 * The SDK's Streamable HTTP server transport, answering a POST with plain JSON when nothing but
 * the answer has to travel (issue #28). The spec lets the server pick either content type for a
 * POST that carries a request (2025-03-26 onwards: "either `text/event-stream` … or
 * `application/json`", the client MUST support both), and the SDK's POST handling already
 * insists that the client accepts both. An SSE stream costs an event-store write for its priming
 * event and one per message, a keep-alive timer, a `ReadableStream` and a write per event; most
 * gateway requests (`search_tools`, lists, a quick `call_tool`) send one response and nothing else.
 *
 * So a POST holding one JSON-RPC request starts in the SDK's JSON mode, and switches to an SSE
 * stream (the SDK's own format: priming event when the client speaks 2025-11-25 and an event store
 * is set, events with ids, keep-alive) as soon as that is needed:
 * - its handling sends a related notification (progress, a log message, `tools/list_changed` of
 *   a search that bound tools) or a request to the client (sampling, elicitation, roots) before the
 *   answer: the stream opens and carries them, then the answer;
 * - the answer is not ready within `upgradeAfterMs` (default 10 s, before the SDK's 15 s keep-alive
 *   would first write): a long call gets its stream
 *   and priming event, so a cut connection can be resumed with `Last-Event-ID` as before.
 * Batches, notifications, GET and DELETE go to the SDK unchanged.
 *
 * The SDK (1.x) decides JSON or SSE per transport, not per request; this subclass sets that
 * switch around the synchronous parts of `handleRequest` and `send` only, and reads the stream
 * maps the SDK keeps. `assertAdaptable` checks those fields exist, so an SDK that renames them
 * fails at session start instead of answering wrongly.
 */
import { WebStandardStreamableHTTPServerTransport, type WebStandardStreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** How long a request may run on a JSON answer before it gets an SSE stream (ms). */
export const DEFAULT_UPGRADE_AFTER_MS = 10_000;

/** Options of the adaptive transport: the SDK's, and when a pending answer gets a stream. */
export interface AdaptiveTransportOptions extends WebStandardStreamableHTTPServerTransportOptions {
  /** Ms a request may wait on its answer before its POST is switched to an SSE stream. */
  upgradeAfterMs?: number;
}

type HandleRequestOptions = Parameters<WebStandardStreamableHTTPServerTransport['handleRequest']>[1];
type SendOptions = Parameters<WebStandardStreamableHTTPServerTransport['send']>[1];

/** One POST stream as the SDK keeps it: JSON mode (`resolveJson`) or SSE (`controller`). */
interface StreamEntry {
  resolveJson?: (response: Response) => void;
  controller?: ReadableStreamDefaultController<Uint8Array>;
  encoder?: TextEncoder;
  cleanup: () => void;
}

/** The SDK transport's fields this subclass reads and sets (TypeScript-private there). */
interface SdkInternals {
  _enableJsonResponse: boolean;
  _streamMapping: Map<string, StreamEntry>;
  _requestToStreamMapping: Map<RequestId, string>;
  _closed: boolean;
  writePrimingEvent(controller: ReadableStreamDefaultController<Uint8Array>, encoder: TextEncoder, streamId: string, protocolVersion: string): Promise<void>;
  startKeepAlive(controller: ReadableStreamDefaultController<Uint8Array>, encoder: TextEncoder): ReturnType<typeof setInterval> | undefined;
}

/** A POST answered in JSON mode so far. */
interface PendingAnswer {
  requestId: RequestId;
  protocolVersion: string;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Set once the stream is being opened: later messages wait for its priming event. */
  opened?: Promise<void>;
  /** The last message sent on the opened stream (the next one waits for it). */
  chain?: Promise<void>;
}

const isResponse = (message: JSONRPCMessage): boolean => 'id' in message && ('result' in message || 'error' in message);

function isSingleRequest(body: unknown): body is { id: RequestId; method: string; params?: { protocolVersion?: unknown } } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as Record<string, unknown>;
  return typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number');
}

/** Throws when the SDK transport lacks the fields this subclass relies on. */
export function assertAdaptable(transport: WebStandardStreamableHTTPServerTransport): void {
  const fields = transport as unknown as Partial<SdkInternals>;
  if (
    typeof fields._enableJsonResponse !== 'boolean' ||
    !(fields._streamMapping instanceof Map) ||
    !(fields._requestToStreamMapping instanceof Map) ||
    typeof fields.writePrimingEvent !== 'function' ||
    typeof fields.startKeepAlive !== 'function'
  ) {
    throw new Error('this MCP SDK version cannot answer Streamable HTTP requests adaptively (JSON or SSE)');
  }
}

/** The Streamable HTTP transport of a gateway session: JSON answers when no stream is needed. */
export class AdaptiveStreamableHTTPServerTransport extends WebStandardStreamableHTTPServerTransport {
  readonly #upgradeAfterMs: number;
  readonly #pending = new Map<string, PendingAnswer>();

  constructor(options: AdaptiveTransportOptions) {
    const { upgradeAfterMs, ...sdkOptions } = options;
    super({ ...sdkOptions, enableJsonResponse: false });
    this.#upgradeAfterMs = upgradeAfterMs ?? DEFAULT_UPGRADE_AFTER_MS;
    assertAdaptable(this);
  }

  get #sdk(): SdkInternals {
    return this as unknown as SdkInternals;
  }

  /** POSTs still answered in JSON mode (for tests). */
  get pendingJsonAnswers(): number {
    return this.#pending.size;
  }

  override async handleRequest(request: Request, options?: HandleRequestOptions): Promise<Response> {
    if (request.method !== 'POST' || this.#sdk._closed) return super.handleRequest(request, options);
    let body = options?.parsedBody;
    if (body === undefined) {
      // Read here so the SDK's POST handling has no await before it picks JSON or SSE; a body
      // over the limit or not JSON goes to the SDK as it came, which answers 413 or 400.
      const limit = (this as unknown as { _maxRequestBodySize?: unknown })._maxRequestBodySize;
      const maxBytes = typeof limit === 'number' ? limit : Number.POSITIVE_INFINITY;
      if (Number(request.headers.get('content-length') ?? 0) > maxBytes) return super.handleRequest(request, options);
      const text = await request.text();
      const again = (): Request => {
        const headers = new Headers(request.headers);
        headers.delete('content-length');
        return new Request(request.url, { method: 'POST', headers, body: text });
      };
      if (Buffer.byteLength(text) > maxBytes) return super.handleRequest(again(), options);
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        return super.handleRequest(again(), options);
      }
    }
    if (!isSingleRequest(body)) return super.handleRequest(request, { ...options, parsedBody: body });
    const sdk = this.#sdk;
    let answer: Promise<Response>;
    sdk._enableJsonResponse = true;
    try {
      answer = super.handleRequest(request, { ...options, parsedBody: body });
    } finally {
      sdk._enableJsonResponse = false;
    }
    // The SDK mapped the request to its stream synchronously when it took the JSON path.
    const streamId = sdk._requestToStreamMapping.get(body.id);
    if (streamId !== undefined && sdk._streamMapping.get(streamId)?.resolveJson) {
      const initializeVersion = body.method === 'initialize' && typeof body.params?.protocolVersion === 'string' ? body.params.protocolVersion : undefined;
      const protocolVersion = initializeVersion ?? request.headers.get('mcp-protocol-version') ?? '2025-03-26';
      const pending: PendingAnswer = { requestId: body.id, protocolVersion, timer: undefined };
      if (this.#upgradeAfterMs > 0 && Number.isFinite(this.#upgradeAfterMs)) {
        pending.timer = setTimeout(() => void this.#open(streamId).catch(() => undefined), this.#upgradeAfterMs);
      }
      this.#pending.set(streamId, pending);
    }
    return answer;
  }

  override async send(message: JSONRPCMessage, options?: SendOptions): Promise<void> {
    const requestId = isResponse(message) ? (message as { id: RequestId }).id : options?.relatedRequestId;
    const streamId = requestId === undefined ? undefined : this.#sdk._requestToStreamMapping.get(requestId);
    const pending = streamId === undefined ? undefined : this.#pending.get(streamId);
    if (streamId === undefined || pending === undefined) return super.send(message, options);
    if (pending.opened === undefined && isResponse(message)) {
      // The answer, and nothing went before it: one JSON body. The SDK's JSON path has no await,
      // so the switch is back off before anything else runs (an SSE stream's send must never see it on).
      this.#settle(streamId, pending);
      const sdk = this.#sdk;
      let sent: Promise<void>;
      sdk._enableJsonResponse = true;
      try {
        sent = super.send(message, options);
      } finally {
        sdk._enableJsonResponse = false;
      }
      return sent;
    }
    // Something else travels with this request (or it took long): it needs the stream. Its
    // messages go out one after another (each waits for its event-store write), in the order sent.
    const previous = pending.chain ?? this.#open(streamId);
    if (isResponse(message)) this.#settle(streamId, pending);
    const sent = previous.then(() => super.send(message, options));
    pending.chain = sent.then(
      () => undefined,
      () => undefined,
    );
    return sent;
  }

  override async close(): Promise<void> {
    // A request still waiting on a JSON answer gets a stream that closes with the session, as SSE
    // requests do (the SDK's JSON mode would leave the HTTP request open for ever).
    const waiting = [...this.#pending.keys()];
    await Promise.allSettled(waiting.map((streamId) => this.#open(streamId)));
    for (const [streamId, pending] of this.#pending) this.#settle(streamId, pending);
    return super.close();
  }

  #settle(streamId: string, pending: PendingAnswer): void {
    if (pending.timer !== undefined) clearTimeout(pending.timer);
    if (this.#pending.get(streamId) === pending) this.#pending.delete(streamId);
  }

  /** Switches a JSON-mode POST to an SSE stream (once): the SDK's headers, priming event and keep-alive. */
  #open(streamId: string): Promise<void> {
    const pending = this.#pending.get(streamId);
    if (!pending) return Promise.resolve();
    if (pending.opened) return pending.opened;
    if (pending.timer !== undefined) clearTimeout(pending.timer);
    pending.timer = undefined;
    const sdk = this.#sdk;
    const entry = sdk._streamMapping.get(streamId);
    if (!entry?.resolveJson) {
      pending.opened = Promise.resolve();
      return pending.opened;
    }
    const resolveJson = entry.resolveJson;
    const encoder = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let keepAlive: ReturnType<typeof setInterval> | undefined;
    const readable = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      cancel: () => {
        if (keepAlive !== undefined) clearInterval(keepAlive);
        if (sdk._streamMapping.get(streamId)?.controller === controller) sdk._streamMapping.delete(streamId);
      },
    });
    sdk._streamMapping.set(streamId, {
      controller,
      encoder,
      cleanup: () => {
        if (keepAlive !== undefined) clearInterval(keepAlive);
        sdk._streamMapping.delete(streamId);
        try {
          controller.close();
        } catch {
          // already closed
        }
      },
    });
    const headers: Record<string, string> = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    resolveJson(new Response(readable, { status: 200, headers }));
    pending.opened = (async () => {
      await sdk.writePrimingEvent(controller, encoder, streamId, pending.protocolVersion);
      if (sdk._streamMapping.get(streamId)?.controller === controller) keepAlive = sdk.startKeepAlive(controller, encoder);
    })();
    return pending.opened;
  }
}

/**
 * How a session's POSTs are answered: `adaptive` (JSON unless a stream is needed, the default),
 * `sse` (always a stream, the SDK's default), `json` (always JSON: progress and requests to the
 * client of a request are then dropped, the SDK's `enableJsonResponse`).
 */
export type ResponseMode = 'adaptive' | 'sse' | 'json';

/** What every session transport of one HTTP front shares. */
export interface SessionTransportOptions {
  responseMode: ResponseMode;
  maxRequestBodySize: number;
  upgradeAfterMs?: number;
}

/** A session's transport for `id`, answering as `options.responseMode` says. */
export function createSessionTransport(
  options: SessionTransportOptions,
  session: { id: string; eventStore?: WebStandardStreamableHTTPServerTransportOptions['eventStore'] },
): WebStandardStreamableHTTPServerTransport {
  const sdkOptions: WebStandardStreamableHTTPServerTransportOptions = {
    maxRequestBodySize: options.maxRequestBodySize,
    sessionIdGenerator: () => session.id,
    ...(session.eventStore ? { eventStore: session.eventStore } : {}),
  };
  if (options.responseMode === 'adaptive') return new AdaptiveStreamableHTTPServerTransport({ ...sdkOptions, ...(options.upgradeAfterMs === undefined ? {} : { upgradeAfterMs: options.upgradeAfterMs }) });
  return new WebStandardStreamableHTTPServerTransport({ ...sdkOptions, enableJsonResponse: options.responseMode === 'json' });
}
