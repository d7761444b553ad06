/**
 * @module composition/front-pacing
 * Paces MCP POSTs where Node hands the server a request, before the API app sees it (issue #28).
 *
 * The gateway starts at most one POST per event-loop turn (`gateway/turn-gate.ts`), so under load
 * most requests wait for a turn: 130-147 of 150 sessions in the 150-session bench. Waiting inside
 * the gateway's handler, each held what the API app had built for it by then (the Web `Request`
 * and Hono context, the middleware chain's suspended async frames, the request id, the
 * principal), and since that wait outlives a young-generation collection or two, V8 copied all of
 * it and promoted it to the old generation, to die there: ~37 MB/s promoted at ~650 searches/s,
 * a mark-compact every ~10 s, scavenges ~15 % of the main thread. Waiting here, a request holds
 * only Node's own `IncomingMessage` and `ServerResponse`, and its body stays in the socket.
 *
 * Only `POST /mcp` waits (GETs hold SSE streams open, DELETEs end sessions; the REST API and the
 * probes are not paced, as before). The gateway handler is then told the POSTs are paced already
 * (`pacing: 'external'`). A POST refused because too many wait gets the gateway's own overload
 * answer: 503 with Retry-After and a JSON-RPC error. Nothing is checked here that the app checks
 * later: authentication, limits and the handler run as before, in the request's turn.
 */
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { overloadRetryAfter } from '../gateway/admission.ts';
import { overloadedBody } from '../gateway/http-answers.ts';
import { TurnGate } from '../gateway/turn-gate.ts';

/** The MCP endpoint's POSTs (the route the API app mounts at `/mcp`, with or without a query). */
export function isPacedRequest(request: Pick<IncomingMessage, 'method' | 'url'>): boolean {
  const url = request.url ?? '';
  return request.method === 'POST' && (url === '/mcp' || url.startsWith('/mcp?'));
}

/** Writes the gateway's overload refusal on a raw response (the request body stays unread, so the connection closes). */
function refuse(response: ServerResponse, error: unknown): void {
  const retryAfterSeconds = overloadRetryAfter(error) ?? 1;
  const body = overloadedBody((error as Error).message);
  response.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'retry-after': String(retryAfterSeconds), connection: 'close' });
  response.end(body);
}

/** Wraps a request listener so paced requests start when the gate gives them a turn. */
export function pacedListener(gate: TurnGate, listener: RequestListener): RequestListener {
  return (request: IncomingMessage, response: ServerResponse) => {
    if (!isPacedRequest(request)) {
      listener(request, response);
      return;
    }
    gate.enter().then(
      () => listener(request, response),
      (error: unknown) => refuse(response, error),
    );
  };
}

/**
 * A `createServer` for @hono/node-server's `serve` whose listener is paced by `gate`. Typed as
 * Node's (overloaded) `createServer`, which `serve` accepts; `serve` always calls it with the
 * server options and its listener, the only form this implements.
 */
export function pacedServerFactory(gate: TurnGate): typeof createHttpServer {
  const create = (options: ServerOptions, listener: RequestListener): Server => createHttpServer(options, pacedListener(gate, listener));
  return create as typeof createHttpServer;
}
