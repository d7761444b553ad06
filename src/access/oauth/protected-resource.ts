/**
 * @module access/oauth/protected-resource
 * Quiver as an OAuth protected resource (RFC 9728, MCP authorization 2025-06-18 and later):
 * its resource identifier (the `/mcp` URL), where its metadata lives, and the metadata
 * document itself. Without a configured identifier it is derived from the request, but only for
 * a Host the caller allows (loopback by default): a token names the resource it was issued for,
 * and letting any Host header choose the expected audience would accept a token issued for
 * another server (RFC 8707).
 */

/** The path of the MCP endpoint, the protected resource. */
export const MCP_PATH = '/mcp';

/** RFC 9728 §3: the well-known prefix of protected resource metadata. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** Settings of the protected resource. */
export interface ProtectedResourceSettings {
  /** The authorization server's issuer identifier. */
  issuer: string;
  /** The resource identifier (`https://quiver.example/mcp`); undefined: derived per request. */
  resource?: string | undefined;
  /** Scopes advertised in the metadata and challenges. */
  scopesSupported: readonly string[];
}

/** The resource identifier for a request, or undefined when its Host may not name one. */
export function resourceFor(request: Request, settings: ProtectedResourceSettings, allowedHosts: readonly string[]): string | undefined {
  if (settings.resource) return settings.resource;
  const url = new URL(request.url);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowedHosts.some((host) => host.replace(/^\[|\]$/g, '') === hostname)) return undefined;
  return `${url.origin}${MCP_PATH}`;
}

/** RFC 9728 §3.1: the metadata URL of a resource (the well-known prefix goes between host and path). */
export function metadataUrlFor(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${path}`;
}

/** The RFC 9728 metadata document of `resource`. */
export function protectedResourceMetadata(resource: string, settings: ProtectedResourceSettings): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [settings.issuer],
    scopes_supported: [...settings.scopesSupported],
    bearer_methods_supported: ['header'],
    resource_name: 'Quiver',
  };
}
