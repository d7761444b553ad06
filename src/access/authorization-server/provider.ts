/**
 * @module access/authorization-server/provider
 * The protocol part of the built-in authorization server is `oidc-provider` (certified), set up
 * here for MCP clients; only storage, accounts and pages are Quiver's. What it is configured to do:
 * - authorization code only, PKCE required (the library checks S256 only), `iss` in every
 *   authorization response (RFC 9207, the library's default);
 * - Dynamic Client Registration (open, as MCP clients expect) and Client ID Metadata Documents
 *   (an https `client_id` whose document the library fetches, refusing special-use addresses:
 *   loopback and private networks; only the test-only setting lifts that);
 * - redirect URIs matched exactly, except the port of a loopback redirect of a `native` client
 *   (RFC 8252 §7.3, the library's rule);
 * - resource indicators (RFC 8707): a token is only ever for Quiver's `/mcp` (another resource is
 *   `invalid_target`), a JWT signed ES256 with the stored key, carrying the account's
 *   organisation and roles; refresh tokens rotate on every use (a reused one revokes the grant);
 * - the login and consent pages at `/oauth/interaction/:uid` (interactions.ts), accounts from
 *   the user directory (a disabled or removed account has no session, so no new tokens).
 * Loaded with `import()` so commands that never serve do not load the library.
 */
import type { JWK } from 'jose';
import type ProviderClass from 'oidc-provider';
import type { Logger } from '../../core/logger.ts';
import type { Queryable } from '../../store/database.ts';
import { TOKEN_SCOPES } from '../oauth/token-principal.ts';
import { databaseAdapter } from './adapter.ts';
import { messagePage, PAGE_HEADERS } from './pages.ts';
import type { UserDirectory } from './users.ts';

export type Provider = ProviderClass;

/** The paths the provider answers (all under `/oauth/`, besides its discovery document). */
export const PROVIDER_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  jwks: '/oauth/jwks',
  revocation: '/oauth/revoke',
  end_session: '/oauth/logout',
  userinfo: '/oauth/userinfo',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
} as const;

/** The interaction (login / consent) page of an interaction id. */
export const interactionPath = (uid: string) => `/oauth/interaction/${uid}`;

/** Scopes a client may ask for: OpenID's own and the scopes a token may carry into Quiver. */
export const PROVIDER_SCOPES = ['openid', 'offline_access', ...TOKEN_SCOPES] as const;

export interface ProviderSettings {
  issuer: string;
  db: Queryable;
  users: UserDirectory;
  /** Private signing keys (ES256 JWKs). */
  signingKeys: JWK[];
  /** Keys that sign the provider's cookies. */
  cookieKeys: string[];
  /** True when `indicator` is Quiver's resource (its `/mcp` URL as clients name it). */
  isResource(indicator: string): boolean;
  /** The resource of a request that names none. */
  defaultResource: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Test-only: fetch Client ID Metadata Documents from loopback / private addresses. */
  allowPrivateClientMetadata: boolean;
  /** Believe X-Forwarded-Proto / -Host for its URLs and cookies' Secure flag (the caller strips them from untrusted peers). */
  proxy: boolean;
  logger: Logger;
}

type Ctx = { oidc: { route?: string }; type: string; body: unknown; set(name: string, value: string): void };

export async function createProvider(settings: ProviderSettings): Promise<Provider> {
  const { default: Provider, errors } = await import('oidc-provider');
  const { users } = settings;
  const provider = new Provider(settings.issuer, {
    adapter: databaseAdapter(settings.db),
    jwks: { keys: settings.signingKeys },
    cookies: { keys: settings.cookieKeys },
    scopes: [...PROVIDER_SCOPES],
    responseTypes: ['code'],
    pkce: { required: () => true },
    routes: PROVIDER_ROUTES,
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', id_token_signed_response_alg: 'ES256' },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'], userinfoSigningAlgValues: ['ES256'] },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => interactionPath(interaction.uid) },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf ?? settings.defaultResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (!settings.isResource(indicator)) throw new errors.InvalidTarget('this authorization server issues tokens only for Quiver (its /mcp URL)');
          return {
            scope: TOKEN_SCOPES.join(' '),
            audience: indicator,
            accessTokenTTL: settings.accessTokenTtlSeconds,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    // Test-only: without the library's guard (special-use addresses refused), a loopback metadata server is reachable.
    ...(settings.allowPrivateClientMetadata
      ? { fetch: (url: string, options: Record<string, unknown>) => globalThis.fetch(url, { ...options, dispatcher: undefined } as RequestInit) }
      : {}),
    // Refresh tokens for every client registered for them (not only with offline_access), rotated on each use.
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(grant: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // Tokens outlive the browser session of the sign-in (an MCP client keeps working after the tab closes).
    expiresWithSession: () => false,
    ttl: {
      AccessToken: settings.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: settings.refreshTokenTtlSeconds,
      RefreshToken: settings.refreshTokenTtlSeconds,
    },
    findAccount: async (_ctx: unknown, id: string) => {
      const user = await users.active(id);
      return user ? { accountId: user.id, claims: () => ({ sub: user.id, email: user.email }) } : undefined;
    },
    // The account's organisation and roles, read when the token is issued; the resource server checks them again on each use.
    extraTokenClaims: async (_ctx: unknown, token: { accountId?: string }) => {
      const user = token.accountId === undefined ? undefined : await users.active(token.accountId);
      return user ? { org: user.orgId, groups: user.roles } : undefined;
    },
    renderError: (ctx: Ctx, out: { error?: string; error_description?: string }) => {
      for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
      ctx.type = 'html';
      ctx.body = messagePage('Sign-in failed', `${out.error ?? 'error'}: ${out.error_description ?? ''}`);
    },
  });
  // Errors are answered to the client; only unexpected ones are worth a line, and never with tokens.
  provider.proxy = settings.proxy;
  provider.on('server_error', (_ctx: unknown, error: unknown) => settings.logger.error({ message: (error as Error)?.message }, 'authorization server error'));
  return provider;
}
