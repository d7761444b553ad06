/**
 * @module gateway/http
 * The gateway over Streamable HTTP as a Web-standard fetch handler (mount it at `/mcp` in
 * Hono or any runtime). One SDK `WebStandardStreamableHTTPServerTransport` and one gateway
 * session per MCP session id (`mcp-session-id` header). Before anything else the Host and
 * Origin headers are checked against an allow-list, loopback by default (DNS-rebinding
 * protection, MCP transport spec). The caller authenticates (the API's bearer-key
 * middleware) and passes its principal; a resolver turns it into the session's identity,
 * and a session only answers requests whose principal resolves to the same identity.
 * DELETE ends a session; idle sessions are collected by the gateway's sweep. A gateway full
 * of live sessions, or too busy to take more work, answers 503 with `Retry-After` and a
 * JSON-RPC error (issue #18) instead of evicting another tenant or making clients wait.
 * POSTs start one per event-loop turn by default (`TurnGate`), so the server keeps accepting new
 * connections under load.
 *
 * With a `SessionStore` (issue #16) sessions live in the database and this handler's map is a
 * cache: a request whose session id this process does not hold is served by rebuilding the
 * session from its row (`stored-sessions`), a cached copy is checked per request on a shared
 * store, and every changed state is written before its response leaves. Their SSE events are
 * stored too (`sessions/event-store`): a `GET` with `Last-Event-ID` resumes a lost stream on
 * any replica.
 *
 * Issue #24: a request without a session id that carries the 2026-07-28 `_meta` envelope (the
 * SDK's own classification, `isLegacyRequest`) is answered statelessly by the SDK v2 entry
 * (`createMcpHandler`, strict modern) on a per-request server from `Gateway.modernServer`:
 * no session is created and no session id is sent.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createMcpHandler, isLegacyRequest, type McpHttpHandler as ModernHttpHandler } from '@modelcontextprotocol/server';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../core/hash.ts';
import { isQuiverError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import type { SessionIdentity } from './backend.ts';
import type { Gateway, GatewaySession } from './gateway.ts';
import { overloadRetryAfter } from './admission.ts';
import { OVERLOADED_ERROR_CODE } from './errors.ts';
import { CALL_TOOL } from './meta-tools.ts';
import type { SessionOwner } from './session-registry.ts';
import type { SessionStore } from '../sessions/index.ts';
import { DEFAULT_ANSWER_HOLD_MS, SessionPostLane } from './session-post-lane.ts';
import { StoredSessions, declaredClient, type HttpSession } from './stored-sessions.ts';
import { DEFAULT_TURN_GATE, TurnGate, type TurnGateOptions } from './turn-gate.ts';
import { observeMcpExchange, observeMcpTransport, type McpRequestObserver } from '../telemetry/index.ts';
import { runWithForwardedHeaders } from '../core/forwarded-headers.ts';
import { headerRefusal, headerTarget, type HeaderTarget } from './mcp-headers.ts';
import { JSON_RPC_HTTP_ERROR, bearerChallenge } from '../core/bearer-challenge.ts';
import { routeRetry, type ReplicaForwarding } from './replica-forward.ts';

/** Hostnames allowed by default: loopback only. */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '[::1]'];

export interface McpHttpHandlerOptions<P> {
  gateway: Gateway;
  /**
   * Turns the authenticated principal (and the request, for per-connection choices such as
   * the exposure mode) into a session identity; throw `forbidden` to refuse.
   */
  resolveIdentity: (principal: P, request: Request) => SessionIdentity | Promise<SessionIdentity>;
  /**
   * Who a new session counts against for the per-tenant session limits (the API key and its
   * organisation). Default: the resolved identity itself and its organisation.
   */
  ownerOf?: (principal: P, identity: SessionIdentity) => SessionOwner;
  /** Hostnames (no port) accepted in the Host header (default: loopback). */
  allowedHosts?: readonly string[];
  /** Exact origins accepted in the Origin header (default: any origin whose hostname is an allowed host). */
  allowedOrigins?: readonly string[];
  /** Largest JSON-RPC POST body, bytes (default 4 MiB). */
  maxBodyBytes?: number;
  /** Answer POSTs with plain JSON instead of SSE streams (default false). */
  enableJsonResponse?: boolean;
  /**
   * Longest a 2025-era session POST's answer is held to be sent whole instead of through the
   * SDK's per-POST stream (issue #28, `session-post-lane`), ms; 0: always the SDK's stream
   * (default `DEFAULT_ANSWER_HOLD_MS`).
   */
  answerHoldMs?: number;
  /**
   * POSTs started per event-loop turn and most waiting for one (see `TurnGate`); `'external'`:
   * the host paces them before this handler (`composition/front-pacing.ts`), which starts them at once.
   */
  pacing?: Partial<TurnGateOptions> | 'external';
  /** Sessions in the database, servable by any replica (issue #16); none: in this process only. */
  sessionStore?: SessionStore;
  /** Times and traces each session's MCP requests at its transport (issue #16). */
  observer?: McpRequestObserver;
  /** Issue #24: replicas on one PostgreSQL forward a 2026 retry to the replica holding its paused call. */
  replicas?: ReplicaForwarding;
  logger?: Logger;
}

/** The `/mcp` handler. */
export interface McpHttpHandler<P> {
  /** Handles one request to the MCP endpoint for an authenticated principal. */
  handle(request: Request, principal: P): Promise<Response>;
  /** Live HTTP sessions. */
  readonly sessionCount: number;
  /** Closes every HTTP session. */
  close(): Promise<void>;
}

/** A JSON-RPC error body without a request id (an HTTP-level refusal). */
function jsonRpcErrorBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(jsonRpcErrorBody(code, message), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** The JSON-RPC body of an overload refusal (also written by the host's front pacing). */
export function overloadedBody(message: string): string {
  return jsonRpcErrorBody(OVERLOADED_ERROR_CODE, message);
}

/** 503 with Retry-After: the gateway is full or overloaded; the client should come back later. */
function overloadedResponse(message: string, retryAfterSeconds: number): Response {
  return jsonRpcError(503, OVERLOADED_ERROR_CODE, message, { 'retry-after': String(retryAfterSeconds) });
}

function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}

/** Checks Host and Origin against the allow-lists; returns the refusal, or undefined. */
export function checkRequestOrigin(request: Request, allowedHosts: readonly string[], allowedOrigins?: readonly string[]): Response | undefined {
  const host = request.headers.get('host') ?? new URL(request.url).host;
  const hostname = hostnameOf(host);
  if (!hostname || !allowedHosts.includes(hostname)) return jsonRpcError(403, -32000, `Forbidden: host '${host}' is not allowed`);
  const origin = request.headers.get('origin');
  if (origin !== null) {
    let allowed: boolean;
    if (allowedOrigins) allowed = allowedOrigins.includes(origin);
    else {
      try {
        allowed = allowedHosts.includes(new URL(origin).hostname);
      } catch {
        allowed = false;
      }
    }
    if (!allowed) return jsonRpcError(403, -32000, `Forbidden: origin '${origin}' is not allowed`);
  }
  return undefined;
}

/**
 * The body of a request without a session id: it must be a POST whose JSON (within the size
 * limit) holds an `initialize` request; otherwise the JSON-RPC error response to send.
 */
async function readInitializeBody(request: Request, maxBodyBytes: number): Promise<{ body: unknown } | Response> {
  const noSession = (): Response => jsonRpcError(400, -32000, 'Bad Request: no valid session id (mcp-session-id) provided');
  if (request.method !== 'POST') return noSession();
  const tooLarge = (): Response => jsonRpcError(413, -32000, `Payload too large: at most ${maxBodyBytes} bytes`);
  if (Number(request.headers.get('content-length') ?? 0) > maxBodyBytes) return tooLarge();
  const text = await request.text();
  if (text.length > maxBodyBytes) return tooLarge();
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    return jsonRpcError(400, -32700, 'Parse error: the body is not valid JSON');
  }
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => isInitializeRequest(message)) ? { body } : noSession();
}

/**
 * `call_tool` declares its `name` as the header parameter `Tool-Name` for 2026-07-28 clients
 * (SEP-2243, `modern-server.ts`); the SDK entry checks declarations of the tools it registered
 * itself only, so Quiver checks this one: a header that disagrees with the body is 400 / -32020.
 */
async function toolNameHeaderMismatch(request: Request): Promise<Response | undefined> {
  const header = request.headers.get('mcp-param-tool-name');
  if (header === null) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(await request.clone().text()) as unknown;
  } catch {
    return undefined; // the SDK entry answers a malformed body
  }
  const params = (body as { method?: unknown; params?: { name?: unknown; arguments?: { name?: unknown } } } | null)?.params;
  if ((body as { method?: unknown } | null)?.method !== 'tools/call' || params?.name !== CALL_TOOL) return undefined;
  if (params.arguments?.name === header) return undefined;
  return jsonRpcError(400, -32020, `Header mismatch: Mcp-Param-Tool-Name '${header}' does not match the call_tool argument name`);
}

/**
 * A session's POST, its JSON body read here (issue #28): `request.text()` is @hono/node-server's
 * direct read of the socket, whereas the SDK transport reads `request.body`, which turns the
 * server's lightweight request into a full web `Request` over a web stream (about 3 % of the
 * server's CPU under the gatewayLoad bench). Anything the SDK answers with an error (a declared
 * length over the limit, a body over it, text that is not JSON) goes to it unparsed, rebuilt from
 * the text, so those answers are the SDK's own, in its order (406 and 415 before the body).
 */
async function readSessionPost(request: Request, maxBodyBytes: number): Promise<{ request: Request; parsedBody?: unknown; response?: Response }> {
  if (Number(request.headers.get('content-length')) > maxBodyBytes) return { request };
  let text: string;
  try {
    text = await request.text();
  } catch {
    // The client went away mid-body: the SDK's answer to a body it could not read.
    return { request, response: jsonRpcError(400, -32700, 'Parse error: Invalid JSON') };
  }
  const unparsed = () => ({ request: new Request(request.url, { method: request.method, headers: request.headers, body: text }) });
  if (Buffer.byteLength(text) > maxBodyBytes) return unparsed();
  try {
    return { request, parsedBody: JSON.parse(text) as unknown };
  } catch {
    return unparsed();
  }
}

/** Creates the Streamable HTTP handler for `/mcp`. */
export function createMcpHttpHandler<P>(options: McpHttpHandlerOptions<P>): McpHttpHandler<P> {
  const { gateway } = options;
  const logger = (options.logger ?? silentLogger).child({ component: 'gateway-http' });
  const allowedHosts = options.allowedHosts ?? LOOPBACK_HOSTS;
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const sessions = new Map<string, HttpSession>();
  const gate = options.pacing === 'external' ? undefined : new TurnGate({ ...DEFAULT_TURN_GATE, ...options.pacing });
  const stored = options.sessionStore ? new StoredSessions(options.sessionStore, gateway, logger) : undefined;
  // Concurrent first requests of one stored session on this replica share one restore.
  const restoring = new Map<string, Promise<HttpSession | undefined>>();
  // JSON answers are already whole: the lane is for SSE answers only.
  const answerHoldMs = options.enableJsonResponse ? 0 : (options.answerHoldMs ?? DEFAULT_ANSWER_HOLD_MS);
  const transportOptions = { enableJsonResponse: options.enableJsonResponse ?? false, maxRequestBodySize: maxBodyBytes };
  // The identity travels to the per-request factory through the entry's pass-through authInfo.
  const modern: ModernHttpHandler = createMcpHandler(
    (context) => gateway.modernServer((context.authInfo?.extra as { identity: SessionIdentity }).identity),
    {
      legacy: 'reject',
      maxRequestBodySize: maxBodyBytes,
      responseMode: options.enableJsonResponse ? 'json' : 'auto',
      onerror: (error) => logger.debug({ err: error }, '2026-07-28 request refused or failed'),
    },
  );
  // Issue #24: a catalog change reaches 2026 clients' subscriptions/listen streams (the SDK entry
  // serves them: acknowledgement first, subscription ids, filters). The hint carries no data, so
  // every stream gets it; each client then lists its own tools.
  const stopListsChanged = gateway.onListsChanged(() => {
    modern.notify.toolsChanged();
    modern.notify.promptsChanged();
    modern.notify.resourcesChanged();
  });

  /** A 2026-07-28 request, counted under its header method (issue #24). */
  async function serveModern(request: Request, identity: SessionIdentity, target: HeaderTarget | undefined): Promise<Response> {
    const started = performance.now();
    const response = await answerModern(request, identity, target);
    if (options.observer && target) observeMcpExchange(options.observer, { method: target.method, toolName: target.name, seconds: (performance.now() - started) / 1000, status: response.status });
    return response;
  }

  /** A 2026-07-28 request (issue #24): stateless, under the same pacing and overload answers. */
  async function answerModern(request: Request, identity: SessionIdentity, target: HeaderTarget | undefined): Promise<Response> {
    if (request.method === 'POST' && gateway.saturated) return overloadedResponse('Quiver is overloaded; retry shortly', 1);
    if (request.method === 'POST') {
      const overloadedNow = await turn();
      if (overloadedNow) return overloadedNow;
    }
    const mismatch = await toolNameHeaderMismatch(request);
    if (mismatch) return mismatch;
    if (options.replicas && request.method === 'POST') {
      const routed = await routeRetry(options.replicas, gateway, request, identity);
      if (routed) return routed;
    }
    try {
      // The plugin calls this request makes carry the client's Mcp-Param-* headers (HTTP plugins).
      return await runWithForwardedHeaders(target?.forwarded ?? {}, () => modern.fetch(request, { authInfo: { token: '', clientId: 'quiver', scopes: [], extra: { identity } } }));
    } catch (error) {
      const retryAfterSeconds = overloadRetryAfter(error);
      if (retryAfterSeconds !== undefined) return overloadedResponse((error as Error).message, retryAfterSeconds);
      throw error;
    }
  }

  /** Waits for this request's turn; a refusal when too many wait. */
  async function turn(): Promise<Response | undefined> {
    if (!gate) return undefined;
    try {
      await gate.enter();
      return undefined;
    } catch (error) {
      const retryAfterSeconds = overloadRetryAfter(error);
      if (retryAfterSeconds !== undefined) return overloadedResponse((error as Error).message, retryAfterSeconds);
      throw error;
    }
  }

  function track(entry: HttpSession): void {
    const id = entry.session.id;
    if (options.observer) observeMcpTransport(entry.transport, options.observer, id);
    sessions.set(id, entry);
    void entry.session.closed.then(() => {
      if (sessions.get(id) === entry) sessions.delete(id);
    });
  }

  /** Drops this process's copy of a stored session that ended elsewhere (its outcome is reported there). */
  function dropLocal(id: string): void {
    const entry = sessions.get(id);
    if (!entry) return;
    sessions.delete(id);
    void entry.session.close({ report: false });
  }

  async function startSession(request: Request, identity: SessionIdentity, identityKey: string, owner: SessionOwner, body: unknown): Promise<Response> {
    const id = randomUUID();
    let session: GatewaySession;
    try {
      session = await gateway.openSession(identity, { sessionId: id, owner });
    } catch (error) {
      const retryAfterSeconds = overloadRetryAfter(error);
      if (retryAfterSeconds !== undefined) return overloadedResponse((error as Error).message, retryAfterSeconds);
      throw error;
    }
    // Stored sessions keep their SSE events, so a stream can be resumed on any replica.
    const eventStore = stored?.store.events.forSession(id);
    const transport = new WebStandardStreamableHTTPServerTransport({ ...transportOptions, eventStore, sessionIdGenerator: () => id });
    // Before anything else wraps the transport's `send` (stored sessions, telemetry): they see every message first.
    const lane = new SessionPostLane(transport, { eventStore, holdMs: answerHoldMs });
    const entry: HttpSession = { session, transport, identityKey, version: 0, savedState: '', saving: Promise.resolve(), lane };
    if (stored) {
      const refusedForMs = await stored.start(entry, identity, owner, declaredClient(body), dropLocal);
      if (refusedForMs !== undefined) {
        await session.close({ report: false });
        return overloadedResponse('Quiver holds its most MCP sessions; retry later', Math.ceil(refusedForMs / 1000));
      }
      stored.persistBeforeResponses(entry);
    }
    track(entry);
    await session.connect(transport);
    logger.debug({ sessionId: id }, 'http session started');
    return transport.handleRequest(request, { parsedBody: body });
  }

  /** The session this request names, from this process or the store; undefined: answer 404. */
  async function sessionFor(sessionId: string, identity: SessionIdentity, identityKey: string): Promise<HttpSession | undefined> {
    const cached = sessions.get(sessionId);
    if (cached) {
      // Another identity's session is as good as none: never confirm it exists.
      if (cached.identityKey !== identityKey) return undefined;
      if (stored && !(await stored.sync(cached))) {
        dropLocal(sessionId);
        return undefined;
      }
      return cached;
    }
    if (!stored) return undefined;
    let pending = restoring.get(sessionId);
    if (!pending) {
      pending = stored.restore(sessionId, identity, identityKey, transportOptions, answerHoldMs).finally(() => restoring.delete(sessionId));
      restoring.set(sessionId, pending);
    }
    const entry = await pending;
    if (!entry || entry.identityKey !== identityKey) return undefined;
    if (!sessions.has(sessionId)) track(entry);
    return entry;
  }

  async function continueSession(request: Request, sessionId: string, identity: SessionIdentity, identityKey: string): Promise<Response> {
    let existing: HttpSession | undefined;
    try {
      existing = await sessionFor(sessionId, identity, identityKey);
    } catch (error) {
      const retryAfterSeconds = overloadRetryAfter(error);
      if (retryAfterSeconds !== undefined) return overloadedResponse((error as Error).message, retryAfterSeconds);
      throw error;
    }
    if (!existing) return jsonRpcError(404, -32001, 'Session not found');
    gateway.touchSession(sessionId);
    // Overloaded: refuse new work at once rather than queue it behind a 30 s wait.
    if (request.method === 'POST' && gateway.saturated) return overloadedResponse('Quiver is overloaded; retry shortly', 1);
    if (request.method === 'POST') {
      const overloadedNow = await turn();
      if (overloadedNow) return overloadedNow;
    }
    let response: Response;
    if (request.method === 'POST') {
      const post = await readSessionPost(request, maxBodyBytes);
      if (post.response) return post.response;
      const whole = post.parsedBody === undefined ? undefined : existing.lane.serve(post.request, post.parsedBody);
      response = await (whole ?? existing.transport.handleRequest(post.request, post.parsedBody === undefined ? undefined : { parsedBody: post.parsedBody }));
    } else response = await existing.transport.handleRequest(request);
    if (stored && request.method === 'DELETE' && response.ok) await stored.end(sessionId);
    return response;
  }

  return {
    async handle(request, principal) {
      const refused = checkRequestOrigin(request, allowedHosts, options.allowedOrigins);
      if (refused) return refused;
      let identity: SessionIdentity;
      try {
        identity = await options.resolveIdentity(principal, request);
      } catch (error) {
        if (isQuiverError(error, 'forbidden')) return jsonRpcError(403, -32000, error.message);
        // The request carried a key (the API authenticated it), so the token is what is refused (RFC 6750).
        if (isQuiverError(error, 'unauthorized')) return jsonRpcError(401, JSON_RPC_HTTP_ERROR, error.message, { 'www-authenticate': bearerChallenge(true, error.message) });
        throw error;
      }
      const identityKey = canonicalJson(identity);
      const sessionId = request.headers.get('mcp-session-id');
      if (sessionId) return continueSession(request, sessionId, identity, identityKey);
      // Issue #24: a 2026-07-28 request names its method and target in headers; a tool the
      // principal may not call is refused on them, before the body is read.
      const target = request.method === 'POST' ? headerTarget(request) : undefined;
      if (target) {
        const refusedByHeaders = await headerRefusal(gateway, identity, target);
        if (refusedByHeaders) {
          if (options.observer) observeMcpExchange(options.observer, { method: target.method, toolName: target.name, seconds: 0, status: refusedByHeaders.status });
          return refusedByHeaders;
        }
      }
      if (request.method === 'POST' && !(await isLegacyRequest(request, undefined, { maxRequestBodySize: maxBodyBytes }))) return serveModern(request, identity, target);
      const initialize = await readInitializeBody(request, maxBodyBytes);
      if (initialize instanceof Response) return initialize;
      const { body } = initialize;
      const owner = options.ownerOf ? options.ownerOf(principal, identity) : { key: identityKey, org: identity.orgId };
      const overloadedNow = await turn();
      if (overloadedNow) return overloadedNow;
      return startSession(request, identity, identityKey, owner, body);
    },
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      // Stored sessions outlive this process: only the copies here close, their outcomes stay open in the rows.
      const report = stored === undefined;
      await Promise.allSettled([...sessions.values()].map((entry) => entry.saving.then(() => entry.session.close({ report }))));
      sessions.clear();
      stopListsChanged();
      await modern.close();
      await stored?.store.flush();
    },
  };
}
