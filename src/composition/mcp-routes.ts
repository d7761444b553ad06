/**
 * @module composition/mcp-routes
 * The MCP gateway as a route of the API app: `mcpRoutes(...)` mounts the Streamable HTTP
 * endpoint at `/mcp` (the API middleware has already authenticated the bearer key) and turns
 * the key's principal (scope `mcp` required) into the session identity. It joins two fronts,
 * the API and the gateway, so it lives in the composition root, not in either of them.
 */
import type { Hono } from 'hono';
import type { Principal } from '../access/api-keys.ts';
import type { ApiRouteModule } from '../api/app.ts';
import type { ApiEnv } from '../api/http.ts';
import { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions } from '../gateway/http.ts';
import { identityFromPrincipal } from '../gateway/identity.ts';
import { JSON_RPC_HTTP_ERROR } from '../core/bearer-challenge.ts';

/** The `/mcp` route module for the API app, plus the handler (close it on shutdown). */
export function mcpRoutes(
  options: Omit<McpHttpHandlerOptions<Principal>, 'resolveIdentity'> & Partial<Pick<McpHttpHandlerOptions<Principal>, 'resolveIdentity'>>,
): ApiRouteModule & { handler: McpHttpHandler<Principal> } {
  const handler = createMcpHttpHandler<Principal>({ resolveIdentity: identityFromPrincipal, ...options });
  return {
    handler,
    register(app: Hono<ApiEnv>) {
      app.all('/mcp', (c) => handler.handle(c.req.raw, c.get('principal')));
    },
    // A refusal before the gateway (no key, a bad key, a body too large) is still JSON-RPC (issue #12).
    errorBodies: { '/mcp': (error) => ({ jsonrpc: '2.0', error: { code: JSON_RPC_HTTP_ERROR, message: error.message }, id: null }) },
    openapi: {
      '/mcp': {
        post: { summary: 'MCP Streamable HTTP endpoint (JSON-RPC; needs the mcp scope)', tags: ['mcp'] },
        get: { summary: 'MCP server-to-client SSE stream of a session', tags: ['mcp'] },
        delete: { summary: 'Ends an MCP session', tags: ['mcp'] },
      },
    },
  };
}
