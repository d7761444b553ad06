/**
 * @module plugins/oauth/authorize-flow
 * The interactive leg of authorizing a remote MCP server (issue #27), as a CLI runs it (RFC 8252
 * loopback redirect): a one-shot HTTP listener on 127.0.0.1 at a random port receives the
 * authorization response at `/callback`; the URL to open is handed to the caller (printed by
 * `quiver plugin authorize`); the first callback is redeemed through `RemoteOAuth.complete`,
 * which checks its state and issuer. The page the browser lands on names no token and echoes
 * nothing it was sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import type { RemoteOAuth } from './remote-oauth.ts';

/** Options of `authorizeRemote`. */
export interface AuthorizeOptions {
  /** Told the URL the user opens in a browser. */
  onAuthorizationUrl(url: URL): void;
  /** How long to wait for the browser (default 5 minutes). */
  timeoutMs?: number;
}

const PAGE = (message: string) =>
  `<!doctype html><meta charset="utf-8"><title>Quiver</title><p>${message}</p>`;

/** Runs the whole flow for the server at `url`; resolves once Quiver holds its tokens. */
export async function authorizeRemote(remoteOAuth: RemoteOAuth, url: string, options: AuthorizeOptions): Promise<void> {
  let deliver: (params: URLSearchParams) => void = () => undefined;
  const arrived = new Promise<URLSearchParams>((resolve) => (deliver = resolve));
  let answered = false;
  const server: Server = createServer((request, response) => {
    const target = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || target.pathname !== '/callback' || answered) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    answered = true;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(PAGE('Quiver received the authorization. You may close this window and return to the terminal.'));
    deliver(target.searchParams);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    const { authorizationUrl } = await remoteOAuth.begin(url, redirectUri);
    options.onAuthorizationUrl(authorizationUrl);
    const timeoutMs = options.timeoutMs ?? 5 * 60_000;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new QuiverError(ErrorCodes.timeout, `no authorization arrived within ${Math.round(timeoutMs / 1000)} s; run the command again`)), timeoutMs);
    });
    await remoteOAuth.complete(url, await Promise.race([arrived, timedOut]));
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
