/**
 * @module test/helpers/serve-app-mcp
 * The production gateway of an app served on loopback HTTP at `/mcp`, the way `quiver serve`
 * mounts it (the app's API modules beside the MCP routes), for tests that drive `/mcp` with real
 * clients or raw requests.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createApi } from '../../src/api/app.ts';
import type { App } from '../../src/app.ts';
import { createAppGateway } from '../../src/composition/server.ts';
import { mcpRoutes } from '../../src/composition/mcp-routes.ts';

/** A served gateway: its `/mcp` URL, and `close()` (sessions, then the gateway, then the listener). */
export interface ServedAppMcp {
  url: URL;
  close(): Promise<void>;
}

export async function serveAppMcp(app: App): Promise<ServedAppMcp> {
  const appGateway = await createAppGateway(app);
  const mcp = mcpRoutes({ gateway: appGateway.gateway });
  const api = createApi({ apiKeys: app.apiKeys, modules: [...app.apiModules(), mcp] });
  const server = serve({ fetch: api.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
    async close() {
      await mcp.handler.close();
      await appGateway.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
