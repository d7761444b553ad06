/**
 * @module composition/mcp-routes
 * The MCP gateway as a route of the API app: `mcpRoutes(...)` mounts the Streamable HTTP
 * endpoint at `/mcp` (the API middleware has already authenticated the bearer key) and turns
 * the key's principal (scope `mcp` required) into the session identity. A principal without the
 * `mcp` scope (an access token granted other scopes) gets 403 with `insufficient_scope` and the
 * scope to ask for (MCP authorization, issue #27) before the gateway sees it. It joins two fronts,
 * the API and the gateway, so it lives in the composition root, not in either of them.
 */
import type { Hono } from 'hono';
import { hasScope, type Principal } from '../access/api-keys.ts';
import type { ApiRouteModule } from '../api/app.ts';
import type { ApiEnv } from '../api/http.ts';
import { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions } from '../gateway/http.ts';
import { identityFromPrincipal } from '../gateway/identity.ts';
import { JSON_RPC_HTTP_ERROR, forbiddenChallenge, type ChallengeParameters } from '../core/bearer-challenge.ts';

/** Options of `mcpRoutes` beyond the handler's: the challenge parameters of a refusal (resource metadata). */
export interface McpRouteOptions {
  challenge?: ((request: Request) => ChallengeParameters) | undefined;
}

/** The `/mcp` route module for the API app, plus the handler (close it on shutdown). */
export function mcpRoutes(
  options: Omit<McpHttpHandlerOptions<Principal>, 'resolveIdentity'> & Partial<Pick<McpHttpHandlerOptions<Principal>, 'resolveIdentity'>> & McpRouteOptions,
): ApiRouteModule & { handler: McpHttpHandler<Principal> } {
  const { challenge, ...handlerOptions } = options;
  const handler = createMcpHttpHandler<Principal>({ resolveIdentity: identityFromPrincipal, ...handlerOptions });
  return {
    handler,
    register(app: Hono<ApiEnv>) {
      app.all('/mcp', (c) => {
        const principal = c.get('principal');
        if (!hasScope(principal, 'mcp')) {
          const message = `the credential lacks the 'mcp' scope`;
          return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: JSON_RPC_HTTP_ERROR, message }, id: null }), {
            status: 403,
            headers: { 'content-type': 'application/json', 'www-authenticate': forbiddenChallenge(message, { ...challenge?.(c.req.raw), scope: 'mcp' }) },
          });
        }
        return handler.handle(c.req.raw, principal);
      });
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
