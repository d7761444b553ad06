/**
 * @module composition/gateway-backend/passthrough
 * Resources and prompts of the plugins a session can see, run by the supervisor. Lists fan
 * out to every visible plugin with a process (synced plugins have none) and return what
 * answered plus a warning per plugin that failed; a read or a prompt needs a visible plugin.
 * A client's roots change goes to the connections its session used (issue #12).
 */
import type { Prompt, Resource } from '@modelcontextprotocol/sdk/types.js';
import type { AggregatedList, BackendCallOptions, BackendSession, GatewayBackend } from '../../gateway/backend.ts';
import type { CallOptions, Supervisor, UpstreamSpec } from '../../runtime/index.ts';
import type { RolloutService, SlotTarget } from '../../rollouts/index.ts';
import type { BackendCaches } from './caches.ts';
import type { SessionVisibility } from './visibility.ts';
import { screenPromptResult, screenResourceResult } from './result-screen.ts';
import type { OwnedSpec } from './remote-owner.ts';

/** What the passthrough methods are built from. */
export interface PassthroughDeps {
  supervisor: Pick<Supervisor, 'listResources' | 'readResource' | 'listPrompts' | 'getPrompt' | 'rootsChanged'>;
  visibility: SessionVisibility;
  caches: BackendCaches;
  /** Blue-green slots (issue #29): during a canary a read or prompt goes to the session's slot, like its tool calls. */
  slots?: Pick<RolloutService, 'routeTarget'> | undefined;
  /** Issue #27: a remote plugin authorized per user or organisation is asked with the session's owner's authorization. */
  owned?: OwnedSpec | undefined;
}

/** The spec bound to the session's owner where the remote plugin's authorization is per user or organisation. */
export function ownedFor(deps: Pick<PassthroughDeps, 'owned'>, spec: UpstreamSpec, session: BackendSession): Promise<UpstreamSpec> {
  return deps.owned ? deps.owned(spec, session) : Promise.resolve(spec);
}

/**
 * Asks every visible plugin with a process (synced plugins have none) for a list; what answered
 * is kept with its plugin, each failure becomes a warning (also used by `surface-methods.ts`).
 */
export async function fanOutToPlugins<T>(
  deps: Pick<PassthroughDeps, 'visibility' | 'caches' | 'owned'>,
  session: BackendSession,
  list: (spec: UpstreamSpec) => Promise<T[]>,
  what: string,
): Promise<AggregatedList<T>> {
  const { visibility, caches } = deps;
  const names = [...(await visibility.visiblePlugins(session)).keys()];
  const known = await caches.plugins();
  // Plugins that registered through sync have no process to ask.
  const launchable = names.filter((name) => known.get(name)?.launch);
  const settled = await Promise.allSettled(launchable.map(async (name) => ({ name, items: await list(await ownedFor(deps, await caches.specFor(name), session)) })));
  const result: AggregatedList<T> = { items: [], warnings: [] };
  settled.forEach((outcome, i) => {
    if (outcome.status === 'fulfilled') {
      for (const item of outcome.value.items) result.items.push({ pluginName: outcome.value.name, item });
    } else {
      result.warnings.push(`${launchable[i]}: ${what} failed: ${(outcome.reason as Error).message}`);
    }
  });
  return result;
}

/**
 * The slot serving this session's request during a rollout (issue #29): the same session bucket
 * as its tool calls, and only for what the canary serves unchanged, so one client sees one
 * version for a whole step. Without a rollout (or slots), the stable spec.
 */
export function routed(deps: Pick<PassthroughDeps, 'slots'>, session: BackendSession, pluginName: string, stable: UpstreamSpec, target: SlotTarget): UpstreamSpec {
  return deps.slots?.routeTarget(pluginName, stable, session.sessionId, target) ?? stable;
}

/** The supervisor options of a read, prompt or completion: cancellation, the session's client for what the plugin sends meanwhile, and its progress (issue #12). */
export function requestOptions(options: BackendCallOptions = {}): CallOptions {
  return {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.client ? { caller: options.client } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
}

/** Creates `listResources`, `readResource`, `listPrompts`, `getPrompt` and `rootsChanged`. */
export function createPassthroughMethods(deps: PassthroughDeps): Pick<GatewayBackend, 'listResources' | 'readResource' | 'listPrompts' | 'getPrompt' | 'rootsChanged'> {
  const { supervisor, visibility, caches } = deps;
  const fanOut = <T>(session: BackendSession, list: (spec: UpstreamSpec) => Promise<T[]>, what: string) => fanOutToPlugins(deps, session, list, what);

  return {
    // Issue #12: a client's roots changed; only the plugin connections its session used are told.
    rootsChanged: (session) => supervisor.rootsChanged(session.sessionId),

    listResources: (session) => fanOut<Resource>(session, (spec) => supervisor.listResources(spec), 'resources/list'),

    async readResource(session, pluginName, uri, options = {}) {
      await visibility.requireVisiblePlugin(session, pluginName);
      // Issue #23: a resource's text reaches the model like a tool result, so it is screened the same way.
      const spec = await ownedFor(deps, routed(deps, session, pluginName, await caches.specFor(pluginName), { kind: 'resource', uri }), session);
      return screenResourceResult(await supervisor.readResource(spec, uri, requestOptions(options)), pluginName, uri);
    },

    listPrompts: (session) => fanOut<Prompt>(session, (spec) => supervisor.listPrompts(spec), 'prompts/list'),

    async getPrompt(session, pluginName, name, args, options = {}) {
      await visibility.requireVisiblePlugin(session, pluginName);
      const spec = await ownedFor(deps, routed(deps, session, pluginName, await caches.specFor(pluginName), { kind: 'prompt', name }), session);
      return screenPromptResult(await supervisor.getPrompt(spec, name, args, requestOptions(options)), pluginName, name);
    },
  };
}
