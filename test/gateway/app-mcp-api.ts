/**
 * The real app's REST API with `/mcp` mounted on the real gateway, as `quiver serve` wires it, for
 * tests that send requests in process (`api.request`): the gateway backend, the gateway, the MCP
 * routes, the API, an `mcp`-scoped key, and the close of the parts made here (the app stays the
 * caller's).
 */
import type { App } from '../../src/app.ts';
import { createApi } from '../../src/api/app.ts';
import { createGatewayBackend } from '../../src/composition/gateway-backend.ts';
import { mcpRoutes } from '../../src/composition/mcp-routes.ts';
import { createGateway } from '../../src/gateway/gateway.ts';

export interface AppMcpApi {
  api: ReturnType<typeof createApi>;
  /** An API key with the `mcp` scope. */
  key: string;
  /** Closes the MCP handler, the gateway and its backend. */
  close: () => Promise<void>;
}

export async function mountMcpApi(app: App, options: { maxBodyBytes?: number } = {}): Promise<AppMcpApi> {
  const gatewayBackend = createGatewayBackend({ db: app.db, selection: app.selection, plugins: app.plugins, supervisor: app.supervisor });
  const gateway = createGateway({ backend: gatewayBackend, options: { sessions: { sweepIntervalMs: 0 } } });
  const mcp = mcpRoutes({ gateway });
  const api = createApi({ apiKeys: app.apiKeys, modules: [...app.apiModules(), mcp], ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }) });
  const key = (await app.apiKeys.create({ name: 'agent', scopes: ['mcp'] })).key;
  return {
    api,
    key,
    close: async () => {
      await mcp.handler.close();
      await gateway.close();
      await gatewayBackend.close();
    },
  };
}
