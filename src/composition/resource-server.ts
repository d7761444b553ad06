/**
 * @module composition/resource-server
 * Wires Quiver as an OAuth protected resource (issue #27) from its configuration: the
 * authenticator that takes API keys and access tokens side by side, the public metadata routes
 * (RFC 9728) and the `resource_metadata` parameter of every challenge. Without an issuer
 * configured, API keys alone, and challenges name no metadata.
 */
import type { ApiKeyService } from '../access/api-keys.ts';
import { createAuthenticator, type Authenticator } from '../access/oauth/bearer-authenticator.ts';
import { createJwtVerifier } from '../access/oauth/jwt-verifier.ts';
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

/** Builds the resource-server parts; `allowedHosts` may name the resource when it is not configured. */
export function createResourceServer(apiKeys: Pick<ApiKeyService, 'authenticate'>, oauth: OAuthConfig | undefined, allowedHosts: readonly string[]): ResourceServerParts {
  if (!oauth) return { authenticator: createAuthenticator({ apiKeys }), modules: [] };
  const resource: ProtectedResourceSettings = { issuer: oauth.issuer, resource: oauth.resource, scopesSupported: oauth.scopesSupported };
  const verifier = createJwtVerifier({ issuer: oauth.issuer, jwksUrl: oauth.jwksUrl, clockToleranceSeconds: oauth.clockToleranceSeconds });
  const mapping = { orgClaim: oauth.orgClaim, userClaim: oauth.userClaim, rolesClaim: oauth.rolesClaim, organisations: oauth.organisations };
  return {
    authenticator: createAuthenticator({ apiKeys, tokens: { verifier, mapping, resource, allowedHosts } }),
    modules: [protectedResourceRoutes(resource, allowedHosts)],
    challenge(request) {
      const identifier = resourceFor(request, resource, allowedHosts);
      return identifier === undefined ? {} : { resourceMetadata: metadataUrlFor(identifier) };
    },
  };
}
