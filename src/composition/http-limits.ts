/**
 * @module composition/http-limits
 * The HTTP server's own defences (issue #23, "HTTP hygiene"), below the API's body limit:
 * - header and request read timeouts (Node's `headersTimeout` / `requestTimeout`): a client that
 *   trickles its headers or its body is answered 408 with `Connection: close` and cut off once
 *   the time is up. They bound receiving the request only: a long response (an MCP SSE stream,
 *   a slow tool call) is not cut;
 * - a cap on connections open at once from one client address: the ones over it are answered 503
 *   with `Connection: close` and closed before anything of theirs is handled;
 * - a refusal that leaves a request body unread (413) says `Connection: close`, so the client does
 *   not send its next request on a connection the server is about to drop.
 */
import { IncomingMessage, type Server, type ServerOptions } from 'node:http';
import type { Socket } from 'node:net';

/** The server's limits (`QUIVER_HTTP_*`, docs/configuration.md). */
export interface HttpLimits {
  /** Most time to receive a request's headers (ms). */
  headersTimeoutMs: number;
  /** Most time to receive a whole request, headers and body (ms). */
  requestTimeoutMs: number;
  /** Connections open at once from one client address; 0: no cap. */
  maxConnectionsPerClient: number;
}

/** Statuses answered before a request body was read: the connection is closed after them. */
const CLOSING_STATUSES = new Set([408, 413]);

const OVER_CAP_BODY = JSON.stringify({ error: { code: 'unavailable', message: 'too many connections from this address', details: {} } });
const OVER_CAP_RESPONSE = `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(OVER_CAP_BODY)}\r\n\r\n${OVER_CAP_BODY}`;

/** Node server options that enforce the read timeouts. */
export function httpServerOptions(limits: HttpLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node checks for expired requests on this interval (30 s by default): a quarter of the
    // shortest timeout keeps the cut-off within 25 % of it, at one walk over the open sockets.
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4))),
  };
}

/** Wraps a fetch handler so 408 and 413 answers close their connection. */
export function closeAfterRefusals<Env>(fetch: (request: Request, env: Env) => Response | Promise<Response>): (request: Request, env: Env) => Promise<Response> {
  return async (request, env) => {
    const response = await fetch(request, env);
    if (!CLOSING_STATUSES.has(response.status)) return response;
    const headers = new Headers(response.headers);
    headers.set('connection', 'close');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}

/**
 * Caps the connections one client address holds open. Runs before Node's own connection handler,
 * so a connection over the cap is answered and ended before its request is parsed; `isRefused`
 * lets the request handler turn away a request that was already on its way.
 */
export function capConnectionsPerClient(server: Server, maxPerClient: number): { isRefused(request: unknown): boolean } {
  const refused = new WeakSet<Socket>();
  if (maxPerClient <= 0) return { isRefused: () => false };
  const open = new Map<string, number>();
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = open.get(address) ?? 0;
    if (count >= maxPerClient) {
      refused.add(socket);
      socket.end(OVER_CAP_RESPONSE);
      // A client that does not close its side is not kept waiting for.
      socket.setTimeout(2_000, () => socket.destroy());
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return { isRefused: (request) => request instanceof IncomingMessage && refused.has(request.socket) };
}

/** What `serveHttp` needs to apply the limits: the server options, the wrapped handler, and the connection cap to attach. */
export interface HttpGuard<Env> {
  serverOptions: ServerOptions;
  fetch(request: Request, env: Env): Promise<Response>;
  /** Starts counting connections on `server` (call before it accepts any). */
  attach(server: Server): void;
}

/** Applies `limits` around `fetch` (the API's handler on @hono/node-server, whose env carries the Node request). */
export function createHttpGuard<Env extends { incoming?: unknown }>(limits: HttpLimits, fetch: (request: Request, env: Env) => Response | Promise<Response>): HttpGuard<Env> {
  let cap: { isRefused(request: unknown): boolean } = { isRefused: () => false };
  const refusedAnswer = () =>
    new Response(OVER_CAP_BODY, { status: 503, headers: { 'content-type': 'application/json', connection: 'close', 'retry-after': '1' } });
  return {
    serverOptions: httpServerOptions(limits),
    fetch: closeAfterRefusals((request: Request, env: Env) => (cap.isRefused(env.incoming) ? refusedAnswer() : fetch(request, env))),
    attach(server) {
      cap = capConnectionsPerClient(server, limits.maxConnectionsPerClient);
    },
  };
}
