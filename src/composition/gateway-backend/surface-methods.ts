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
import type { RolloutService, SlotTarget } from '../../rollouts/index.ts';
import { fanOutToPlugins, ownedFor, requestOptions, routed } from './passthrough.ts';
import type { OwnedSpec } from './remote-owner.ts';
import type { BackendCaches } from './caches.ts';
import type { SessionVisibility } from './visibility.ts';

/** What the surface methods are built from. */
export interface SurfaceDeps {
  supervisor: Pick<Supervisor, 'listResourceTemplates' | 'complete' | 'subscribeResource'>;
  visibility: SessionVisibility;
  caches: BackendCaches;
  /** Blue-green slots (issue #29): completions and subscriptions go to the session's slot during a canary. */
  slots?: Pick<RolloutService, 'routeTarget'> | undefined;
  /** Issue #27: the session's owner's authorization for a remote plugin authorized per user or organisation. */
  owned?: OwnedSpec | undefined;
}

/** What a completion completes an argument of: a prompt, or a resource template (by its URI template). */
function completionTarget(request: { ref: { type: string; name?: string; uri?: string } }): SlotTarget | undefined {
  if (request.ref.type === 'ref/prompt' && typeof request.ref.name === 'string') return { kind: 'prompt', name: request.ref.name };
  if (request.ref.type === 'ref/resource' && typeof request.ref.uri === 'string') return { kind: 'resource', uri: request.ref.uri };
  return undefined;
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
      const stable = await caches.specFor(pluginName);
      const target = completionTarget(request);
      const spec = await ownedFor(deps, target === undefined ? stable : routed(deps, session, pluginName, stable, target), session);
      return supervisor.complete(spec, request, requestOptions(options));
    },

    async subscribeResource(session, pluginName, uri, onUpdated, options) {
      await visibility.requireVisiblePlugin(session, pluginName);
      const spec = await ownedFor(deps, routed(deps, session, pluginName, await caches.specFor(pluginName), { kind: 'resource', uri }), session);
      return supervisor.subscribeResource(spec, uri, onUpdated, signalOf(options));
    },
  };
}
