/**
 * @module composition/gateway-backend/surface-methods
 * The rest of a plugin's MCP surface for the gateway (issue #12): resource templates fanned
 * out over the session's visible plugins, `completion/complete` and resource subscriptions
 * forwarded to one visible plugin. The supervisor shares one upstream subscription per plugin
 * version and URI between sessions (`runtime/supervisor/resource-extras.ts`).
 */
import type { ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayBackend } from '../../gateway/backend.ts';
import type { Supervisor } from '../../runtime/index.ts';
import { fanOutToPlugins, requestOptions } from './passthrough.ts';
import type { BackendCaches } from './caches.ts';
import type { SessionVisibility } from './visibility.ts';

/** What the surface methods are built from. */
export interface SurfaceDeps {
  supervisor: Pick<Supervisor, 'listResourceTemplates' | 'complete' | 'subscribeResource'>;
  visibility: SessionVisibility;
  caches: BackendCaches;
}

type SurfaceMethods = Required<Pick<GatewayBackend, 'listResourceTemplates' | 'complete' | 'subscribeResource'>>;

/** Creates `listResourceTemplates`, `complete` and `subscribeResource`. */
export function createSurfaceMethods(deps: SurfaceDeps): SurfaceMethods {
  const { supervisor, visibility, caches } = deps;
  const signalOf = (options: { signal?: AbortSignal } = {}) => (options.signal ? { signal: options.signal } : {});
  return {
    listResourceTemplates: (session) =>
      fanOutToPlugins<ResourceTemplate>(deps, session, (spec) => supervisor.listResourceTemplates(spec), 'resources/templates/list'),

    async complete(session, pluginName, request, options) {
      await visibility.requireVisiblePlugin(session, pluginName);
      return supervisor.complete(await caches.specFor(pluginName), request, requestOptions(options));
    },

    async subscribeResource(session, pluginName, uri, onUpdated, options) {
      await visibility.requireVisiblePlugin(session, pluginName);
      return supervisor.subscribeResource(await caches.specFor(pluginName), uri, onUpdated, signalOf(options));
    },
  };
}
