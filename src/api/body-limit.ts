/**
 * @module api/body-limit
 * The API's request size limit (Hono's `bodyLimit`), decided from the headers when they
 * suffice (issue #28, the `/mcp` request path): Hono's middleware reads `request.body` before it
 * looks at `Content-Length`, and on @hono/node-server that one read turns the server's lightweight
 * request into a full web `Request` with a web stream over the socket (about 3 % of the server's
 * CPU under the gatewayLoad bench), although a request with a declared length is then judged on
 * the header alone. Here a GET or HEAD (no body) and a request with `Content-Length` and no
 * `Transfer-Encoding` are judged exactly as Hono judges them, without touching the body, so the
 * handler can still read it through node-server's direct path; anything else (a chunked body, a
 * body of unknown length) goes to Hono's middleware, which counts the bytes as they arrive.
 */
import type { Context, MiddlewareHandler, Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';

/** Options of `requestBodyLimit`. */
export interface RequestBodyLimitOptions {
  /** Largest body, bytes. */
  maxSize: number;
  /** Answers (or throws for) a body over the limit. */
  onError: (c: Context) => Response | Promise<Response>;
}

/** Hono's body limit, decided from the headers without reading the body when they suffice. */
export function requestBodyLimit(options: RequestBodyLimitOptions): MiddlewareHandler {
  const counting = bodyLimit(options);
  return async (c: Context, next: Next) => {
    const request = c.req.raw;
    // Hono lets these through: a web Request never has a body for them.
    if (request.method === 'GET' || request.method === 'HEAD') return next();
    const headers = request.headers;
    const length = headers.get('content-length');
    if (length !== null && !headers.has('transfer-encoding')) return parseInt(length, 10) > options.maxSize ? options.onError(c) : next();
    return counting(c, next);
  };
}
