/**
 * @module test/helpers/oidc-provider
 * A real, certified OpenID provider (`oidc-provider` from npm) on loopback for the authorization
 * tests (issue #27): open Dynamic Client Registration, authorization code with PKCE (required),
 * resource indicators (RFC 8707) issuing JWT access tokens for the resources the test names,
 * the provider's own development login and consent pages (any password), and accounts whose
 * organisation and groups go into the access token as `org` and `groups`. Its ES256 signing key
 * is the test's, so a test can also mint tokens the provider would never issue (expired ones).
 * Optionally it issues refresh tokens (rotated on use) and short-lived access tokens per resource.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import Provider, { errors } from 'oidc-provider';

/** What an account's tokens say about it. */
export interface TestAccount {
  org?: string;
  groups?: string[];
}

/** A running provider. */
export interface TestOidcProvider {
  issuer: string;
  /** Signs a token with the provider's own key (for tokens it would not issue). */
  mint(claims: Record<string, unknown>, options: { audience: string; subject: string; expiresAt: number }): Promise<string>;
  close(): Promise<void>;
}

const SIGNING_KID = 'quiver-test-es256';

/** Starts the provider on 127.0.0.1; `resources()` lists the resource indicators it issues tokens for (read per request). */
export async function startOidcProvider(options: {
  accounts: Record<string, TestAccount>;
  resources: () => readonly string[];
  scopes?: readonly string[];
  /** Access-token lifetime per resource, seconds (default 600). */
  accessTokenTtl?: (resource: string) => number;
  /** Issue refresh tokens to every client allowed the refresh_token grant (default false). */
  refreshTokens?: boolean;
  /**
   * Support OAuth Client ID Metadata Documents (draft-02: https client_ids whose document the
   * provider fetches), fetched with this fetch (the test's CA; the provider's own SSRF
   * protection would refuse the loopback address the test serves them on).
   */
  clientMetadataFetch?: (url: string, init: RequestInit) => Promise<Response>;
}): Promise<TestOidcProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ec = await generateKeyPair('ES256', { extractable: true });
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const ecJwk: JWK = { ...(await exportJWK(ec.privateKey)), kid: SIGNING_KID, alg: 'ES256', use: 'sig' };
  const rsaJwk: JWK = { ...(await exportJWK(rsa.privateKey)), kid: 'quiver-test-rs256', alg: 'RS256', use: 'sig' };
  const scopes = options.scopes ?? ['mcp'];
  const provider = new Provider(issuer, {
    jwks: { keys: [ecJwk, rsaJwk] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: ['openid', 'offline_access', ...scopes],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true },
      ...(options.clientMetadataFetch ? { clientIdMetadataDocument: { enabled: true, ack: 'draft-02' } } : {}),
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (!options.resources().includes(indicator)) throw new errors.InvalidTarget();
          return { scope: scopes.join(' '), audience: indicator, accessTokenTTL: options.accessTokenTtl?.(indicator) ?? 600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } };
        },
      },
    },
    ...(options.clientMetadataFetch ? { fetch: options.clientMetadataFetch } : {}),
    ...(options.refreshTokens ? { issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(grant: string): boolean }) => client.grantTypeAllowed('refresh_token') } : {}),
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) => {
      const account = token.accountId === undefined ? undefined : options.accounts[token.accountId];
      return account ? { ...(account.org ? { org: account.org } : {}), ...(account.groups ? { groups: account.groups } : {}) } : undefined;
    },
  });
  // The provider's warnings about development interactions are expected here.
  provider.on('server_error', (...args: unknown[]) => console.error('oidc-provider server_error', args[1]));
  server.on('request', provider.callback());
  return {
    issuer,
    mint: (claims, mintOptions) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: SIGNING_KID, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setAudience(mintOptions.audience)
        .setSubject(mintOptions.subject)
        .setIssuedAt(mintOptions.expiresAt - 600)
        .setExpirationTime(mintOptions.expiresAt)
        .sign(ec.privateKey as CryptoKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
