/**
 * @module gateway/http-sessions
 * The `/mcp` front for 2025-era sessions: one SDK `WebStandardStreamableHTTPServerTransport` and
 * one gateway session per MCP session id (`mcp-session-id` header), a session answering only
 * requests whose principal resolves to the identity that opened it. DELETE ends a session; idle
 * sessions are collected by the gateway's sweep.
 *
 * With a `SessionStore` (issue #16) sessions live in the database and this front's map is a
 * cache: a request whose session id this process does not hold is served by rebuilding the
 * session from its row (`stored-sessions`), a cached copy is checked per request on a shared
 * store, and every changed state is written before its response leaves. Their SSE events are
 * stored too (`sessions/event-store`): a `GET` with `Last-Event-ID` resumes a lost stream on any
 * replica.
 */
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../core/logger.ts';
import type { SessionStore } from '../sessions/index.ts';
import { observeMcpTransport, type McpRequestObserver } from '../telemetry/index.ts';
import type { SessionIdentity } from './backend.ts';
import type { Gateway, GatewaySession } from './gateway.ts';
import { jsonRpcError, overloadAnswerOrThrow, overloadedResponse } from './http-answers.ts';
import type { PostTurn } from './http-modern.ts';
import { sessionTransportClass } from './sdk-servers.ts';
import { SessionPostLane } from './session-post-lane.ts';
import type { SessionOwner } from './session-registry.ts';
import { StoredSessions, declaredClient, type HttpSession } from './stored-sessions.ts';

export interface SessionFront {
  /** A request without a session id: a POST holding `initialize` opens a session; anything else is refused. */
  open(request: Request, identity: SessionIdentity, identityKey: string, ownerOf: () => SessionOwner): Promise<Response>;
  /** A request naming a session: 404 when this identity has no such session here or in the store. */
  continue(request: Request, sessionId: string, identity: SessionIdentity, identityKey: string): Promise<Response>;
  /** Live sessions in this process. */
  readonly count: number;
  /** Closes this process's sessions (stored ones outlive it: their outcomes stay open in the rows). */
  close(): Promise<void>;
}

export function createSessionFront(input: {
  gateway: Gateway;
  logger: Logger;
  maxBodyBytes: number;
  enableJsonResponse: boolean;
  answerHoldMs: number;
  turn: PostTurn;
  sessionStore?: SessionStore;
  observer?: McpRequestObserver;
}): SessionFront {
  const { gateway, logger, maxBodyBytes, answerHoldMs } = input;
  const sessions = new Map<string, HttpSession>();
  const stored = input.sessionStore ? new StoredSessions(input.sessionStore, gateway, logger) : undefined;
  // Concurrent first requests of one stored session on this replica share one restore.
  const restoring = new Map<string, Promise<HttpSession | undefined>>();
  const transportOptions = { enableJsonResponse: input.enableJsonResponse, maxRequestBodySize: maxBodyBytes };

  function track(entry: HttpSession): void {
    const id = entry.session.id;
    if (input.observer) observeMcpTransport(entry.transport, input.observer, id);
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

  async function start(request: Request, identity: SessionIdentity, identityKey: string, owner: SessionOwner, body: unknown): Promise<Response> {
    const id = randomUUID();
    let session: GatewaySession;
    try {
      session = await gateway.openSession(identity, { sessionId: id, owner });
    } catch (error) {
      return overloadAnswerOrThrow(error);
    }
    // Stored sessions keep their SSE events, so a stream can be resumed on any replica.
    const eventStore = stored?.store.events.forSession(id);
    const Transport = await sessionTransportClass();
    const transport = new Transport({ ...transportOptions, eventStore, sessionIdGenerator: () => id });
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

  return {
    async open(request, identity, identityKey, ownerOf) {
      const initialize = await readInitializeBody(request, maxBodyBytes);
      if (initialize instanceof Response) return initialize;
      const owner = ownerOf();
      const overloadedNow = await input.turn();
      if (overloadedNow) return overloadedNow;
      return start(request, identity, identityKey, owner, initialize.body);
    },
    async continue(request, sessionId, identity, identityKey) {
      let existing: HttpSession | undefined;
      try {
        existing = await sessionFor(sessionId, identity, identityKey);
      } catch (error) {
        return overloadAnswerOrThrow(error);
      }
      if (!existing) return jsonRpcError(404, -32001, 'Session not found');
      gateway.touchSession(sessionId);
      // Overloaded: refuse new work at once rather than queue it behind a 30 s wait.
      if (request.method === 'POST' && gateway.saturated) return overloadedResponse('Quiver is overloaded; retry shortly', 1);
      if (request.method === 'POST') {
        const overloadedNow = await input.turn();
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
    },
    get count() {
      return sessions.size;
    },
    async close() {
      // Stored sessions outlive this process: only the copies here close, their outcomes stay open in the rows.
      const report = stored === undefined;
      await Promise.allSettled([...sessions.values()].map((entry) => entry.saving.then(() => entry.session.close({ report }))));
      sessions.clear();
      await stored?.store.flush();
    },
  };
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
