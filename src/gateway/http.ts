/**
 * @module gateway/http
 * The gateway over Streamable HTTP as a Web-standard fetch handler (mount it at `/mcp` in
 * Hono or any runtime). Before anything else the Host and Origin headers are checked against an
 * allow-list, loopback by default (DNS-rebinding protection, MCP transport spec;
 * `http-answers.ts`). The caller authenticates (the API's bearer-key middleware) and passes its
 * principal; a resolver turns it into the identity the request runs as. Then one of two fronts
 * answers: a request naming a session, or a 2025-era `initialize`, goes to the session front
 * (`http-sessions.ts`: one SDK transport and one gateway session per MCP session id, stored
 * sessions on a shared database); a request without a session id that carries the 2026-07-28
 * `_meta` envelope (the SDK's own classification, `isLegacyRequest`, loaded with the first such
 * POST: `sdk-servers.ts`) goes to the stateless
 * front (`http-modern.ts`, issue #24), after a tool its headers name is checked against the
 * principal's access. A gateway full of live sessions, or too busy to take more work, answers
 * 503 with `Retry-After` (issue #18). POSTs start one per event-loop turn by default
 * (`TurnGate`), so the server keeps accepting new connections under load.
 */
import { canonicalJson } from '../core/hash.ts';
import { isQuiverError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import { JSON_RPC_HTTP_ERROR, bearerChallenge } from '../core/bearer-challenge.ts';
import type { SessionStore } from '../sessions/index.ts';
import { observeMcpExchange, type McpRequestObserver } from '../telemetry/index.ts';
import type { SessionIdentity } from './backend.ts';
import type { Gateway } from './gateway.ts';
import { LOOPBACK_HOSTS, checkRequestOrigin, jsonRpcError, overloadAnswerOrThrow } from './http-answers.ts';
import { createModernFront } from './http-modern.ts';
import { createSessionFront } from './http-sessions.ts';
import { headerRefusal, headerTarget } from './mcp-headers.ts';
import { modernSdk } from './sdk-servers.ts';
import type { ReplicaForwarding } from './replica-forward.ts';
import { DEFAULT_ANSWER_HOLD_MS } from './session-post-lane.ts';
import type { SessionOwner } from './session-registry.ts';
import { DEFAULT_TURN_GATE, TurnGate, type TurnGateOptions } from './turn-gate.ts';

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

/** The `/mcp` handler. */
export interface McpHttpHandler<P> {
  /** Handles one request to the MCP endpoint for an authenticated principal. */
  handle(request: Request, principal: P): Promise<Response>;
  /** Live HTTP sessions. */
  readonly sessionCount: number;
  /** Closes every HTTP session. */
  close(): Promise<void>;
}

/** Creates the Streamable HTTP handler for `/mcp`. */
export function createMcpHttpHandler<P>(options: McpHttpHandlerOptions<P>): McpHttpHandler<P> {
  const { gateway } = options;
  const logger = (options.logger ?? silentLogger).child({ component: 'gateway-http' });
  const allowedHosts = options.allowedHosts ?? LOOPBACK_HOSTS;
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const enableJsonResponse = options.enableJsonResponse ?? false;
  const gate = options.pacing === 'external' ? undefined : new TurnGate({ ...DEFAULT_TURN_GATE, ...options.pacing });

  /** Waits for this POST's turn; a refusal when too many wait. */
  async function turn(): Promise<Response | undefined> {
    if (!gate) return undefined;
    try {
      await gate.enter();
      return undefined;
    } catch (error) {
      return overloadAnswerOrThrow(error);
    }
  }

  const sessionFront = createSessionFront({
    gateway,
    logger,
    maxBodyBytes,
    enableJsonResponse,
    // JSON answers are already whole: the lane is for SSE answers only.
    answerHoldMs: enableJsonResponse ? 0 : (options.answerHoldMs ?? DEFAULT_ANSWER_HOLD_MS),
    turn,
    ...(options.sessionStore ? { sessionStore: options.sessionStore } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
  });
  const modernFront = createModernFront({
    gateway,
    logger,
    maxBodyBytes,
    enableJsonResponse,
    turn,
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.replicas ? { replicas: options.replicas } : {}),
  });

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
      if (sessionId) return sessionFront.continue(request, sessionId, identity, identityKey);
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
      // The SDK v2 server package loads with the first request that needs this classification (issue #28).
      if (request.method === 'POST' && !(await (await modernSdk()).isLegacyRequest(request, undefined, { maxRequestBodySize: maxBodyBytes }))) return modernFront.serve(request, identity, target);
      const ownerOf = () => (options.ownerOf ? options.ownerOf(principal, identity) : { key: identityKey, org: identity.orgId });
      return sessionFront.open(request, identity, identityKey, ownerOf);
    },
    get sessionCount() {
      return sessionFront.count;
    },
    async close() {
      await sessionFront.close();
      await modernFront.close();
    },
  };
}
