/**
 * @module composition/resource-server
 * Wires Quiver as an OAuth protected resource (issue #27) from its configuration: the
 * authenticator that takes API keys and access tokens side by side, the public metadata routes
 * (RFC 9728) and the `resource_metadata` parameter of every challenge. Tokens come from the
 * external issuer configured, or from the built-in authorization server when it runs (never
 * both). Without either, API keys alone, and challenges name no metadata.
 */
import type { JWTPayload } from 'jose';
import type { ApiKeyService, Principal } from '../access/api-keys.ts';
import { createAuthenticator, type Authenticator } from '../access/oauth/bearer-authenticator.ts';
import { createJwtVerifier, type JwtVerifierOptions } from '../access/oauth/jwt-verifier.ts';
import { metadataUrlFor, resourceFor, type ProtectedResourceSettings } from '../access/oauth/protected-resource.ts';
import type { ApiRouteModule } from '../api/app.ts';
import { protectedResourceRoutes } from '../api/routes/protected-resource.ts';
import type { ChallengeParameters } from '../core/bearer-challenge.ts';
import type { OAuthConfig } from '../config.ts';

/** The parts of the resource server the HTTP server plugs in. */
export interface ResourceServerParts {
  authenticator: Authenticator;
  /** The metadata routes (none without OAuth). */
  modules: ApiRouteModule[];
  /** Challenge parameters of a request (none without OAuth). */
  challenge?: (request: Request) => ChallengeParameters;
}

/** How the built-in authorization server's tokens are checked (its issuer is known once it listens). */
export interface BuiltInTokens {
  readonly issuer: string;
  /** Quiver's resource identifier when the issuer is configured (a public origin); else derived per request. */
  resource: string | undefined;
  keys: NonNullable<JwtVerifierOptions['keys']>;
  principalOf(claims: JWTPayload): Promise<Principal>;
}

/** Builds the resource-server parts; `allowedHosts` may name the resource when it is not configured. */
export function createResourceServer(apiKeys: Pick<ApiKeyService, 'authenticate'>, oauth: OAuthConfig | undefined, allowedHosts: readonly string[], builtIn?: BuiltInTokens): ResourceServerParts {
  if (oauth) {
    const resource: ProtectedResourceSettings = { issuer: oauth.issuer, resource: oauth.resource, scopesSupported: oauth.scopesSupported };
    const verifier = createJwtVerifier({ issuer: oauth.issuer, jwksUrl: oauth.jwksUrl, clockToleranceSeconds: oauth.clockToleranceSeconds });
    const mapping = { orgClaim: oauth.orgClaim, userClaim: oauth.userClaim, rolesClaim: oauth.rolesClaim, organisations: oauth.organisations };
    return parts(createAuthenticator({ apiKeys, tokens: { verifier, mapping, resource, allowedHosts } }), resource, allowedHosts);
  }
  if (builtIn) {
    // Getters: the issuer of a server bound to port 0 is known only once it listens.
    const resource: ProtectedResourceSettings = {
      get issuer() {
        return builtIn.issuer;
      },
      resource: builtIn.resource,
      scopesSupported: ['mcp'],
    };
    const verifier = createJwtVerifier({
      get issuer() {
        return builtIn.issuer;
      },
      keys: builtIn.keys,
      clockToleranceSeconds: 5,
    });
    return parts(createAuthenticator({ apiKeys, tokens: { verifier, principalOf: builtIn.principalOf, resource, allowedHosts } }), resource, allowedHosts);
  }
  return { authenticator: createAuthenticator({ apiKeys }), modules: [] };
}

function parts(authenticator: Authenticator, resource: ProtectedResourceSettings, allowedHosts: readonly string[]): ResourceServerParts {
  return {
    authenticator,
    modules: [protectedResourceRoutes(resource, allowedHosts)],
    challenge(request) {
      const identifier = resourceFor(request, resource, allowedHosts);
      return identifier === undefined ? {} : { resourceMetadata: metadataUrlFor(identifier) };
    },
  };
}
