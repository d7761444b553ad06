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
import type { DiscoveredAfterAuthorization, RemoteOAuth, RemoteOwner } from './remote-oauth.ts';

/** Options of `authorizeRemote`. */
export interface AuthorizeOptions {
  /** Told the URL the user opens in a browser. */
  onAuthorizationUrl(url: URL): void;
  /** How long to wait for the browser (default 5 minutes). */
  timeoutMs?: number;
  /** Whose authorization it is (default the hub's). */
  owner?: RemoteOwner;
}

const PAGE = (message: string) =>
  `<!doctype html><meta charset="utf-8"><title>Quiver</title><p>${message}</p>`;

/** A started authorization: the URL to open, and its completion (the callback redeemed, or an error). */
export interface StartedAuthorization {
  authorizationUrl: URL;
  /** Settles once redeemed: the plugins that waited for this authorization and were discovered. */
  completion: Promise<{ discovered: DiscoveredAfterAuthorization[] }>;
}

/**
 * Starts the flow for the server at `url`: the listener is up and the URL ready when this
 * resolves; `completion` settles when the callback was redeemed, refused or timed out (the
 * listener is closed then). A server running `quiver plugin authorize --no-wait` for another
 * process returns the URL at once and completes in the background.
 */
export async function startRemoteAuthorization(remoteOAuth: RemoteOAuth, url: string, options: { timeoutMs?: number; owner?: RemoteOwner } = {}): Promise<StartedAuthorization> {
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
  const stop = async () => {
    clearTimeout(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  let authorizationUrl: URL;
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    ({ authorizationUrl } = await remoteOAuth.begin(url, redirectUri, options.owner));
  } catch (error) {
    await stop();
    throw error;
  }
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QuiverError(ErrorCodes.timeout, `no authorization arrived within ${Math.round(timeoutMs / 1000)} s; run the command again`)), timeoutMs);
  });
  const completion = Promise.race([arrived, timedOut])
    .then((params) => remoteOAuth.complete(url, params, options.owner))
    .finally(stop);
  return { authorizationUrl, completion };
}

/** Runs the whole flow for the server at `url`; resolves once Quiver holds its tokens (and the waiting plugins were discovered). */
export async function authorizeRemote(remoteOAuth: RemoteOAuth, url: string, options: AuthorizeOptions): Promise<{ discovered: DiscoveredAfterAuthorization[] }> {
  const started = await startRemoteAuthorization(remoteOAuth, url, {
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.owner === undefined ? {} : { owner: options.owner }),
  });
  options.onAuthorizationUrl(started.authorizationUrl);
  return started.completion;
}
