/**
 * @module gateway/session-post-lane
 * Issue #28: a 2025-era session's POST that carries one JSON-RPC request is answered whole when
 * its answer is ready soon, instead of through the SDK transport's per-POST web stream. Under 150
 * sessions that stream machinery (a `ReadableStream` per POST, its undici `Response`, the reader
 * loop that copies it to the socket, the JSON-RPC schema checks of every message the transport
 * receives and sends) was ~8–10 % of the server's main thread; a whole answer is one string the
 * HTTP server writes with the headers.
 *
 * What the client receives is what the SDK would have streamed: the same SSE events in the same
 * order, the priming event and an event id per message when the session has an event store and the
 * client speaks 2025-11-25 or later (stored in that store, so `GET` with `Last-Event-ID` replays
 * them through the SDK as before), the same headers. The request reaches the session's server as
 * the SDK would deliver it. What changes is when the headers leave: with the first event rather
 * than at once.
 *
 * The answer is held at most `holdMs`. When it is not complete by then, or as soon as the server
 * sends the client a request of its own (an elicitation or sampling request the client must answer
 * before the call can finish), the request is handed to the SDK transport: it opens its stream as
 * for any POST (the request itself is not delivered to the server twice) and what the server sent
 * meanwhile follows on it in order, so long calls keep their progress notifications, cancellation
 * and resumption exactly as the SDK serves them. Anything the lane does not take (batches,
 * initialize, responses and notifications, a bad header or body) goes to the SDK unchanged and
 * gets its answers and errors.
 */
import { randomUUID } from 'node:crypto';
import type { EventStore, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  JSONRPCRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** Default longest hold of an answer before it becomes the SDK's stream, ms. */
export const DEFAULT_ANSWER_HOLD_MS = 50;

/** Protocol revisions whose clients read a priming event (empty data); older ones cannot. */
const PRIMING_FROM_VERSION = '2025-11-25';

type Receive = (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

/** A request whose answer is being collected. */
interface HeldAnswer {
  readonly request: Request;
  readonly message: JSONRPCRequest;
  readonly protocolVersion: string;
  /** What the server sent for this request so far, in order. */
  readonly events: JSONRPCMessage[];
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Being (or already) handed to the SDK transport's stream. */
  handingOver: boolean;
  settled: boolean;
  resolve(response: Response): void;
}

/** A JSON-RPC result or error (what ends a request), as the session's `send` wrappers tell them apart. */
export function isResponse(message: JSONRPCMessage): boolean {
  return 'id' in message && ('result' in message || 'error' in message);
}

function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return 'method' in message && 'id' in message;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The body as one JSON-RPC request the lane may take, or undefined. The shape the SDK's strict
 * request schema accepts, checked by hand for the usual body; a body with `_meta` (progress
 * tokens, related tasks) goes through that schema itself.
 */
function laneRequest(body: unknown): JSONRPCRequest | undefined {
  if (!isPlainObject(body)) return undefined;
  if (body.jsonrpc !== '2.0' || typeof body.method !== 'string' || body.method === 'initialize') return undefined;
  const id = body.id;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id))) return undefined;
  for (const key in body) if (!REQUEST_KEYS.has(key)) return undefined;
  const params = body.params;
  if (params === undefined) return body as JSONRPCRequest;
  if (!isPlainObject(params)) return undefined;
  if (params._meta === undefined) return body as JSONRPCRequest;
  return JSONRPCRequestSchema.safeParse(body).success ? (body as JSONRPCRequest) : undefined;
}

/** What the SDK hands the server about the HTTP request, built only if a handler reads it. */
function requestInfoOf(request: Request): NonNullable<MessageExtraInfo['requestInfo']> {
  let headers: Record<string, string> | undefined;
  let url: URL | undefined;
  return {
    get headers() {
      if (!headers) {
        const read: Record<string, string> = {};
        request.headers.forEach((value, name) => {
          read[name] = value;
        });
        headers = read;
      }
      return headers;
    },
    get url() {
      return (url ??= new URL(request.url));
    },
  } as NonNullable<MessageExtraInfo['requestInfo']>;
}

function jsonRpcError(status: number, code: number, message: string, data?: string): Response {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return new Response(JSON.stringify({ jsonrpc: '2.0', error, id: null }), { status, headers: { 'Content-Type': 'application/json' } });
}

/** Options of `SessionPostLane`. */
export interface SessionPostLaneOptions {
  /** The session's SSE event store (the transport's own), for event ids and resumption. */
  eventStore?: EventStore | undefined;
  /** Longest hold of an answer, ms (default `DEFAULT_ANSWER_HOLD_MS`). */
  holdMs?: number;
}

/**
 * The lane of one session's transport. Create it right after the transport, before anything
 * else wraps the transport's `send` (stored sessions, telemetry), so those wrappers see every
 * message first; see the module comment.
 */
export class SessionPostLane {
  readonly #transport: WebStandardStreamableHTTPServerTransport;
  readonly #eventStore: EventStore | undefined;
  readonly #holdMs: number;
  readonly #held = new Map<RequestId, HeldAnswer>();
  /** The transport's own `send`, which routes by request to the SDK's streams. */
  readonly #sdkSend: (message: JSONRPCMessage, options?: TransportSendOptions) => Promise<void>;
  /** Requests being handed over: the SDK delivers them again, and that copy is not passed on. */
  readonly #redelivered = new Set<RequestId>();
  #receive: Receive | undefined;
  #attached = false;
  #closed = false;

  constructor(transport: WebStandardStreamableHTTPServerTransport, options: SessionPostLaneOptions = {}) {
    this.#transport = transport;
    this.#eventStore = options.eventStore;
    this.#holdMs = options.holdMs ?? DEFAULT_ANSWER_HOLD_MS;
    this.#sdkSend = transport.send.bind(transport);
    transport.send = (message, sendOptions) => this.#send(message, sendOptions);
    const close = transport.close.bind(transport);
    transport.close = async () => {
      this.#closeHeld();
      await close();
    };
  }

  /**
   * Serves a session POST whose body was parsed: its answer, or undefined when the lane does
   * not take it (the caller hands the request to the SDK transport).
   */
  serve(request: Request, body: unknown): Promise<Response> | undefined {
    if (this.#closed || this.#holdMs <= 0) return undefined;
    const message = laneRequest(body);
    if (!message || this.#held.has(message.id)) return undefined;
    // The SDK's own header checks; a request that fails one gets the SDK's answer.
    const accept = request.headers.get('accept');
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
    if (!isJsonContentType(request.headers.get('content-type'))) return undefined;
    const version = request.headers.get('mcp-protocol-version');
    if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
    if (this.#transport.sessionId === undefined || request.headers.get('mcp-session-id') !== this.#transport.sessionId) return undefined;
    const receive = this.#attach();
    if (!receive) return undefined; // not connected to a server yet
    return new Promise<Response>((resolve) => {
      const held: HeldAnswer = {
        request,
        message,
        protocolVersion: version ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
        events: [],
        timer: undefined,
        handingOver: false,
        settled: false,
        resolve: (response) => {
          if (held.settled) return;
          held.settled = true;
          resolve(response);
        },
      };
      held.timer = setTimeout(() => void this.#handOver(held), this.#holdMs);
      this.#held.set(message.id, held);
      try {
        receive(message, this.#extraFor(held));
      } catch (error) {
        clearTimeout(held.timer);
        this.#held.delete(message.id);
        held.resolve(jsonRpcError(400, -32700, 'Parse error', String(error)));
      }
    });
  }

  /** What the SDK passes with a request it delivers (its stream-closing callbacks only where it would). */
  #extraFor(held: HeldAnswer): MessageExtraInfo {
    const extra: MessageExtraInfo = { requestInfo: requestInfoOf(held.request) };
    if (this.#eventStore && held.protocolVersion >= PRIMING_FROM_VERSION) {
      extra.closeSSEStream = () => {
        void this.#handOver(held).then(() => this.#transport.closeSSEStream(held.message.id));
      };
      extra.closeStandaloneSSEStream = () => this.#transport.closeStandaloneSSEStream();
    }
    return extra;
  }

  /**
   * Takes over the transport's `onmessage` (set by the server's `connect`, maybe wrapped by
   * telemetry): requests the lane delivers go straight to it; a request the SDK delivers again
   * during a hand-over is dropped. Done at the first POST, when every wrapper is in place.
   */
  #attach(): Receive | undefined {
    if (!this.#attached) {
      this.#attached = true;
      const target = this.#transport as { onmessage?: Receive };
      let inner = target.onmessage;
      const redelivered = this.#redelivered;
      const guarded: Receive = (message, extra) => {
        if (isRequest(message) && redelivered.delete(message.id)) return;
        inner?.(message, extra);
      };
      Object.defineProperty(target, 'onmessage', {
        configurable: true,
        enumerable: true,
        get: () => guarded,
        set: (receive: Receive | undefined) => {
          inner = receive;
        },
      });
      this.#receive = (message, extra) => inner?.(message, extra);
    }
    return (this.#transport as { onmessage?: Receive }).onmessage ? this.#receive : undefined;
  }

  #send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = isResponse(message) ? (message as { id: RequestId }).id : options?.relatedRequestId;
    const held = id === undefined ? undefined : this.#held.get(id);
    if (!held) return this.#sdkSend(message, options);
    held.events.push(message);
    if (held.handingOver) return Promise.resolve(); // follows on the SDK's stream, in order
    if (isResponse(message)) this.#answerWhole(held);
    else if (isRequest(message)) void this.#handOver(held); // the client must see it to answer it
    return Promise.resolve();
  }

  /** The complete answer, as one body. */
  #answerWhole(held: HeldAnswer): void {
    clearTimeout(held.timer);
    this.#held.delete(held.message.id);
    this.#resolveWhole(held);
  }

  /** Resolves a held request with what it collected, as one SSE body. */
  #resolveWhole(held: HeldAnswer): void {
    void this.#sseBody(held).then((body) => held.resolve(new Response(body, { status: 200, headers: this.#sseHeaders() })));
  }

  /** The SSE events of a held answer, stored in the event store as the SDK stores them. */
  async #sseBody(held: HeldAnswer): Promise<string> {
    const store = this.#eventStore;
    const withoutIds = () => held.events.map((message) => `event: message\ndata: ${JSON.stringify(message)}\n\n`).join('');
    if (!store) return withoutIds();
    try {
      const streamId = randomUUID();
      let body = '';
      if (held.protocolVersion >= PRIMING_FROM_VERSION) body += `id: ${await store.storeEvent(streamId, {} as JSONRPCMessage)}\ndata: \n\n`;
      for (const message of held.events) body += `event: message\nid: ${await store.storeEvent(streamId, message)}\ndata: ${JSON.stringify(message)}\n\n`;
      return body;
    } catch {
      // The answer still goes out (as the event stores fail open), without ids to resume from.
      return withoutIds();
    }
  }

  #sseHeaders(): Record<string, string> {
    const headers: Record<string, string> = {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    };
    if (this.#transport.sessionId !== undefined) headers['mcp-session-id'] = this.#transport.sessionId;
    return headers;
  }

  /**
   * Hands a held request to the SDK transport: it validates and opens its stream as for any
   * POST (its second delivery of the request is dropped), then what the server sent meanwhile is
   * passed to it in order; later messages go to it directly.
   */
  async #handOver(held: HeldAnswer): Promise<void> {
    const id = held.message.id;
    // Already answered whole, or already on its way to the SDK.
    if (held.handingOver || this.#held.get(id) !== held) return;
    held.handingOver = true;
    clearTimeout(held.timer);
    this.#redelivered.add(id);
    let response: Response;
    try {
      response = await this.#transport.handleRequest(held.request, { parsedBody: held.message });
    } catch (error) {
      response = jsonRpcError(400, -32700, 'Parse error', String(error));
    } finally {
      this.#redelivered.delete(id); // the SDK did not deliver it (an error answer): nothing to drop
    }
    held.resolve(response);
    while (held.events.length > 0) {
      const message = held.events.shift()!;
      // A stream the SDK did not open (an error answer) or that the client dropped has nowhere to write.
      await this.#sdkSend(message, isResponse(message) ? undefined : { relatedRequestId: id }).catch(() => undefined);
    }
    this.#held.delete(id);
  }

  /** The transport closes: held answers end with what was sent (as the SDK's streams end); no more POSTs here. */
  #closeHeld(): void {
    this.#closed = true;
    for (const held of this.#held.values()) {
      if (held.handingOver) continue; // the SDK closes its stream
      clearTimeout(held.timer);
      this.#resolveWhole(held);
    }
    this.#held.clear();
  }
}
