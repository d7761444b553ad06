/**
 * @module access/authorization-server/server
 * The built-in authorization server as one object (issue #27): which requests are its own (the
 * provider's endpoints under `/oauth/`, its metadata at `/.well-known/openid-configuration` and
 * `/.well-known/oauth-authorization-server`, and Quiver's pages), how they are answered, the
 * user directory, and the keys that verify its tokens. The signing key and the provider are
 * set up on first use (so a start never waits on them, and `quiver --help` never loads the
 * library); the issuer is known once the server listens.
 */
import { hkdfSync } from 'node:crypto';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
// jose loads with the first request to the authorization server (issue #28: idle memory).
import type { createLocalJWKSet, JWK } from 'jose';
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import { deleteExpiredProviderRecords } from '../../store/repositories/auth-provider-records.ts';
import { createCsrfTokens } from './csrf.ts';
import { interactionRoutes, SIGNUP_PATH, type NodeBindings } from './interactions.ts';
import { createProvider, type Provider } from './provider.ts';
import { loadSigningKeys, type Sealer } from './signing-keys.ts';
import { createLoginThrottle, type ThrottleLimits } from './throttle.ts';
import { FORWARDED_HEADERS, createProxyTrust, type ProxyTrust } from '../trusted-proxy.ts';
import { createUserDirectory, type UserDirectory } from './users.ts';

export interface AuthorizationServerOptions {
  db: Database;
  /** Seals the private signing key (the hub's secret box). */
  sealer: Sealer;
  /** The hub's secret key: cookie and CSRF keys are derived from it. */
  secretKey: Buffer;
  /** The issuer (Quiver's origin); called once the server listens. */
  issuer: () => string;
  /** True when `indicator` names Quiver's `/mcp`. */
  isResource(indicator: string): boolean;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  allowPrivateClientMetadata: boolean;
  throttle?: ThrottleLimits;
  /** Which peers' X-Forwarded-* to believe (QUIVER_TRUST_PROXY); default none. */
  proxyTrust?: ProxyTrust;
  logger: Logger;
}

export interface AuthorizationServer {
  users: UserDirectory;
  /** The issuer identifier (throws before the server listens). */
  readonly issuer: string;
  /** True when the request is the authorization server's. */
  handles(request: Request): boolean;
  /** Answers one of its requests (on @hono/node-server, whose env carries the Node request). */
  fetch(request: Request, env: NodeBindings): Promise<Response>;
  /** The public keys of its tokens. */
  verificationKeys(): Promise<ReturnType<typeof createLocalJWKSet>>;
}

const DISCOVERY = '/.well-known/openid-configuration';
/** Expired provider records (codes, sessions, interactions) are deleted at most this often, by a request that comes along. */
const SWEEP_INTERVAL_MS = 3600_000;
const RFC8414_DISCOVERY = '/.well-known/oauth-authorization-server';

export function createAuthorizationServer(options: AuthorizationServerOptions): AuthorizationServer {
  const users = createUserDirectory(options.db);
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', options.secretKey, Buffer.alloc(0), `quiver authorization-server ${purpose}`, 32));
  const csrf = createCsrfTokens(derive('csrf'));
  // Failed sign-ins are kept in the database: a restart does not reset them, replicas share them.
  const throttle = createLoginThrottle(options.db, options.throttle);
  const proxyTrust = options.proxyTrust ?? createProxyTrust(undefined);
  let state: Promise<{ provider: Provider; handler: ReturnType<Provider['callback']>; keys: ReturnType<typeof createLocalJWKSet> }> | undefined;
  let provider: Provider | undefined;
  let lastSweep = 0;

  /** Deletes expired records in the background (no timer to stop: requests drive it). */
  function sweepNow(): void {
    if (Date.now() - lastSweep < SWEEP_INTERVAL_MS) return;
    lastSweep = Date.now();
    void deleteExpiredProviderRecords(options.db, new Date()).catch((error: unknown) => options.logger.warn({ message: (error as Error).message }, 'sweeping expired authorization records failed'));
  }

  function started() {
    state ??= (async () => {
      const signing = await loadSigningKeys(options.db, options.sealer);
      const issuer = options.issuer();
      provider = await createProvider({
        issuer,
        db: options.db,
        users,
        signingKeys: signing.privateKeys,
        cookieKeys: [derive('cookies').toString('base64url')],
        isResource: options.isResource,
        defaultResource: `${issuer}/mcp`,
        accessTokenTtlSeconds: options.accessTokenTtlSeconds,
        refreshTokenTtlSeconds: options.refreshTokenTtlSeconds,
        allowPrivateClientMetadata: options.allowPrivateClientMetadata,
        proxy: proxyTrust.enabled,
        logger: options.logger,
      });
      const { createLocalJWKSet } = await import('jose');
      return { provider, handler: provider.callback(), keys: createLocalJWKSet({ keys: signing.publicKeys as JWK[] }) };
    })().catch((error: unknown) => {
      state = undefined; // try again on the next request
      throw error;
    });
    return state;
  }

  const pages = interactionRoutes({ provider: () => provider!, users, csrf, throttle, proxyTrust });

  return {
    users,
    get issuer() {
      return options.issuer();
    },
    handles(request) {
      const path = new URL(request.url).pathname;
      return path.startsWith('/oauth/') || path === DISCOVERY || path === RFC8414_DISCOVERY;
    },
    async fetch(request, env) {
      const { handler } = await started();
      sweepNow();
      // X-Forwarded-* only from a trusted proxy: the provider (proxy = true when one is named) never sees a client's own.
      if (!proxyTrust.trusts(env.incoming.socket.remoteAddress)) for (const name of FORWARDED_HEADERS) delete env.incoming.headers[name];
      const url = new URL(request.url);
      if (url.pathname.startsWith('/oauth/interaction/') || url.pathname === SIGNUP_PATH) return pages.fetch(request, env);
      // RFC 8414 metadata is the same document as OpenID discovery here (an issuer without a path).
      if (url.pathname === RFC8414_DISCOVERY) env.incoming.url = `${DISCOVERY}${url.search}`;
      await new Promise<void>((resolve) => {
        env.outgoing.once('finish', () => resolve());
        env.outgoing.once('close', () => resolve());
        handler(env.incoming, env.outgoing);
      });
      return RESPONSE_ALREADY_SENT;
    },
    async verificationKeys() {
      return (await started()).keys;
    },
  };
}
