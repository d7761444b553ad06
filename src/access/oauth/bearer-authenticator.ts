/**
 * @module access/oauth/bearer-authenticator
 * One authenticator for every request (issue #27): an API key (`qvr_…`, or any non-JWT value)
 * goes to the API-key service as before; a JWT goes to the access-token verifier when an
 * authorization server is configured, and its claims become a principal (`token-principal`).
 * Both kinds work side by side. Without OAuth configured a JWT is just an unknown key.
 */
import type { JWTPayload } from 'jose';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import type { ApiKeyService, Principal } from '../api-keys.ts';
import { looksLikeJwt, type JwtVerifier } from './jwt-verifier.ts';
import { principalFromClaims, type ClaimMapping } from './token-principal.ts';
import { resourceFor, type ProtectedResourceSettings } from './protected-resource.ts';

/** Resolves a request's credential to a principal. */
export interface Authenticator {
  /** The principal of `presented` (an API key or an access token); throws `unauthorized` / `forbidden`. */
  authenticate(presented: string | undefined, request: Request): Promise<Principal>;
}

/** Access-token settings of the authenticator. */
export interface AccessTokenSettings {
  verifier: JwtVerifier;
  /** How claims become a principal (an external issuer's claim mapping) ... */
  mapping?: ClaimMapping;
  /** ... or a function (the built-in authorization server reads the account). */
  principalOf?: (claims: JWTPayload) => Promise<Principal>;
  resource: ProtectedResourceSettings;
  /** Hosts that may name the resource when no identifier is configured. */
  allowedHosts: readonly string[];
}

/** Creates the authenticator; `tokens` absent: API keys only. */
export function createAuthenticator(options: { apiKeys: Pick<ApiKeyService, 'authenticate'>; tokens?: AccessTokenSettings | undefined }): Authenticator {
  const { apiKeys, tokens } = options;
  return {
    async authenticate(presented, request) {
      if (!tokens || presented === undefined || !looksLikeJwt(presented)) return apiKeys.authenticate(presented);
      const audience = resourceFor(request, tokens.resource, tokens.allowedHosts);
      if (audience === undefined) {
        throw new QuiverError(ErrorCodes.unauthorized, 'access tokens are accepted only at the configured resource URL (QUIVER_OAUTH_RESOURCE) or a loopback host');
      }
      const claims = await tokens.verifier.verify(presented, audience);
      if (tokens.principalOf) return tokens.principalOf(claims);
      if (!tokens.mapping) throw new QuiverError(ErrorCodes.unauthorized, 'access tokens are not accepted here');
      return principalFromClaims(claims, tokens.mapping);
    },
  };
}
