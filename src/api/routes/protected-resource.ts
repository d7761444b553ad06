/**
 * @module api/routes/protected-resource
 * Protected Resource Metadata (RFC 9728, issue #27), public: at the path-aware location of the
 * `/mcp` resource (`/.well-known/oauth-protected-resource/mcp`, where MCP clients look first)
 * and at the root location (the fallback clients try next). Both describe the `/mcp` resource
 * and name the configured authorization server. Any origin may read them (CORS `*`): browser
 * based MCP clients fetch them cross-origin, and they hold nothing secret.
 */
import type { Context, Hono } from 'hono';
import { notFound } from '../../core/errors.ts';
import {
  MCP_PATH,
  PROTECTED_RESOURCE_WELL_KNOWN,
  protectedResourceMetadata,
  resourceFor,
  type ProtectedResourceSettings,
} from '../../access/oauth/protected-resource.ts';
import type { ApiEnv } from '../http.ts';
import type { ApiRouteModule } from '../app.ts';

const PATHS = [PROTECTED_RESOURCE_WELL_KNOWN, `${PROTECTED_RESOURCE_WELL_KNOWN}${MCP_PATH}`] as const;

/** The metadata routes; `allowedHosts` are the hosts that may name the resource when none is configured. */
export function protectedResourceRoutes(settings: ProtectedResourceSettings, allowedHosts: readonly string[]): ApiRouteModule {
  const answer = (c: Context<ApiEnv>) => {
    const resource = resourceFor(c.req.raw, settings, allowedHosts);
    if (resource === undefined) throw notFound('protected resource at host', new URL(c.req.url).host);
    c.header('access-control-allow-origin', '*');
    c.header('cache-control', 'public, max-age=300');
    return c.json(protectedResourceMetadata(resource, settings));
  };
  return {
    register(app: Hono<ApiEnv>) {
      for (const path of PATHS) app.get(path, answer);
    },
    publicPaths: PATHS,
    openapi: Object.fromEntries(
      PATHS.map((path) => [path, { get: { summary: 'OAuth protected resource metadata of /mcp (RFC 9728; public)', tags: ['oauth'] } }]),
    ),
  };
}
