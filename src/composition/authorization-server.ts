/**
 * @module composition/authorization-server
 * Wires the built-in authorization server (issue #27) into `quiver serve`: whether it runs
 * (`QUIVER_AUTH_SERVER`: `auto` runs it on a loopback bind when no external issuer is
 * configured; `on` anywhere; `off` never), its issuer (`QUIVER_AUTH_ISSUER`, else the origin the
 * server listens on), which resource indicators are Quiver's `/mcp`, what the resource server
 * needs to accept its tokens, and the admin's `/api/v1/users` routes.
 */
import type { Server } from 'node:http';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import { isPublicBindHost } from '../config.ts';
import type { App } from './app-type.ts';
import type { ApiRouteModule } from '../api/app.ts';
import { userRoutes } from '../api/routes/users.ts';
import { createAuthorizationServer, type AuthorizationServer } from '../access/authorization-server/server.ts';
import { principalOfAccount } from '../access/authorization-server/token-principal.ts';
import { rememberIssuer } from '../access/authorization-server/issuer-record.ts';
import { createProxyTrust } from '../access/trusted-proxy.ts';
import { createSecretBox, loadSecretKey } from '../plugins/secret-box.ts';
import type { BuiltInTokens } from './resource-server.ts';

/** The parts `serveHttp` plugs in. */
export interface BuiltInAuthorizationServer {
  server: AuthorizationServer;
  /** What the resource server needs to accept its tokens. */
  tokens: BuiltInTokens;
  modules: ApiRouteModule[];
  /** Learns the issuer from the listening server (port 0 binds). */
  attach(server: Server): void;
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True when `indicator` is `/mcp` at the issuer's origin, or at a loopback name with the issuer's port (a loopback issuer). */
export function isQuiverResource(indicator: string, issuer: string): boolean {
  let url: URL;
  try {
    url = new URL(indicator);
  } catch {
    return false;
  }
  if (url.pathname !== '/mcp' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return false;
  const own = new URL(issuer);
  if (url.origin === own.origin) return true;
  return LOOPBACK_NAMES.has(own.hostname) && LOOPBACK_NAMES.has(url.hostname) && url.protocol === own.protocol && url.port === own.port;
}

/** The built-in server for a bind host, or undefined when it does not run. */
export function createBuiltInAuthorizationServer(app: App, host: string): BuiltInAuthorizationServer | undefined {
  const settings = app.config.authServer;
  if (settings.mode === 'off') return undefined;
  if (app.config.oauth) {
    if (settings.mode === 'on') throw new QuiverError(ErrorCodes.config, 'QUIVER_AUTH_SERVER=on and QUIVER_OAUTH_ISSUER are both set: tokens come either from the built-in authorization server or from the external one');
    return undefined;
  }
  const publicBind = isPublicBindHost(host);
  if (publicBind && settings.mode === 'auto') return undefined;
  if (publicBind && settings.issuer === undefined) {
    throw new QuiverError(ErrorCodes.config, 'the built-in authorization server on a non-loopback bind needs QUIVER_AUTH_ISSUER: the https origin clients reach Quiver at');
  }
  let listening: string | undefined;
  const issuer = () => {
    const value = settings.issuer ?? listening;
    if (value === undefined) throw new QuiverError(ErrorCodes.unavailable, 'the authorization server is not listening yet');
    return value;
  };
  const secretKey = loadSecretKey({ configured: app.config.secretKey, homeDir: app.config.homeDir }).key;
  const server = createAuthorizationServer({
    db: app.db,
    sealer: createSecretBox(secretKey),
    secretKey,
    issuer,
    isResource: (indicator) => isQuiverResource(indicator, issuer()),
    accessTokenTtlSeconds: settings.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: settings.refreshTokenTtlSeconds,
    allowPrivateClientMetadata: settings.allowPrivateClientMetadata,
    proxyTrust: createProxyTrust(app.config.trustProxy),
    logger: app.logger.child({ part: 'authorization-server' }),
  });
  return {
    server,
    tokens: {
      get issuer() {
        return issuer();
      },
      resource: settings.issuer === undefined ? undefined : `${settings.issuer}/mcp`,
      keys: () => server.verificationKeys(),
      principalOf: (claims) => principalOfAccount(claims, server.users),
    },
    modules: [userRoutes({ users: server.users, signupUrl: (token) => `${issuer()}/oauth/signup?token=${token}` })],
    attach(http) {
      const learn = () => {
        const address = http.address();
        if (typeof address === 'object' && address) listening = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
        // For `quiver user invite`, whose sign-up links name where this server runs.
        void rememberIssuer(app.db, issuer()).catch((error: unknown) => app.logger.warn({ message: (error as Error).message }, 'cannot record the authorization server issuer'));
      };
      if (http.listening) learn();
      else http.once('listening', learn);
    },
  };
}
