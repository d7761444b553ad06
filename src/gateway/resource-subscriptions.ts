/**
 * @module gateway/resource-subscriptions
 * `resources/subscribe` and `resources/unsubscribe` (issue #12). A session subscribes by the
 * URI it sees (Quiver's form or a native one); the backend subscribes the owning plugin (one
 * upstream subscription per plugin connection and URI, shared by sessions), and each
 * `notifications/resources/updated` reaches only the sessions subscribed to that resource,
 * under the URI each of them subscribed with. A closing session drops its subscriptions.
 *
 * Subscriptions live in memory with the session (`subscriptionsOf`). A stored session (issue #16)
 * keeps the subscribed URIs in its row (`subscribedUris`); the copy on another replica subscribes
 * upstream again (`reconcileSubscriptions`), so updates keep reaching the client there.
 */
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ResourceSubscriptionHandle } from './backend.ts';
import { requestFailure } from './errors.ts';
import { sessionResourceAddressing, type PluginResource } from './resource-addressing.ts';
import type { GatewayCore, SessionState } from './session-state.ts';

/** One session's subscription: the URI it used and the backend's handle. */
interface SessionSubscription {
  shownUri: string;
  handle: Promise<ResourceSubscriptionHandle>;
}

/** A session's subscriptions by plugin resource (`plugin\nuri`), so either form of a URI finds one. */
export type SessionSubscriptions = Map<string, SessionSubscription>;

const bySession = new WeakMap<SessionState, SessionSubscriptions>();

/** The subscriptions of a session (created on first use). */
export function subscriptionsOf(state: SessionState): SessionSubscriptions {
  let subscriptions = bySession.get(state);
  if (!subscriptions) {
    subscriptions = new Map();
    bySession.set(state, subscriptions);
  }
  return subscriptions;
}

const keyOf = (target: PluginResource) => `${target.pluginName}\n${target.uri}`;

/** Drops every subscription of a session (at close); failures are logged, never thrown. */
export async function dropSubscriptions(core: GatewayCore, state: SessionState): Promise<void> {
  const subscriptions = subscriptionsOf(state);
  const all = [...subscriptions.values()];
  subscriptions.clear();
  await Promise.allSettled(
    all.map(async (subscription) => {
      try {
        await (await subscription.handle).unsubscribe();
      } catch (error) {
        core.logger.debug({ err: error, sessionId: state.id, uri: subscription.shownUri }, 'dropping a resource subscription failed');
      }
    }),
  );
}

async function resolveTarget(core: GatewayCore, state: SessionState, uri: string): Promise<PluginResource> {
  const target = (await sessionResourceAddressing(core, state)).resolve(uri);
  if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${uri}`);
  return target;
}

/** Installs subscribe/unsubscribe and declares `resources.subscribe` when the backend forwards them. */
export function installSubscriptionHandlers(core: GatewayCore, state: SessionState): void {
  const { backend, logger } = core;
  const maybeSubscribe = backend.subscribeResource?.bind(backend);
  if (!maybeSubscribe) return;
  const subscribe = maybeSubscribe;
  state.server.registerCapabilities({ resources: { subscribe: true } });
  let closed = false;
  void state.closed.then(() => {
    closed = true;
    return dropSubscriptions(core, state);
  });

  async function subscribeSession(shownUri: string, signal?: AbortSignal): Promise<Record<string, never>> {
    const target = await resolveTarget(core, state, shownUri);
    const subscriptions = subscriptionsOf(state);
    if (subscriptions.has(keyOf(target))) return {};
    const onUpdated = () => {
      if (closed) return;
      state.server.sendResourceUpdated({ uri: shownUri }).catch((error: unknown) => logger.debug({ err: error, sessionId: state.id }, 'sending a resource update failed'));
    };
    const handle = subscribe(state.backendSession, target.pluginName, target.uri, onUpdated, signal ? { signal } : {});
    subscriptions.set(keyOf(target), { shownUri, handle });
    try {
      const opened = await handle;
      // The session closed while the plugin answered: nothing will drop it later.
      if (closed) await opened.unsubscribe();
      return {};
    } catch (error) {
      if (subscriptions.get(keyOf(target))?.handle === handle) subscriptions.delete(keyOf(target));
      throw requestFailure(`subscribe ${shownUri}`, error, logger);
    }
  }

  async function unsubscribeSession(shownUri: string): Promise<Record<string, never>> {
    const target = await resolveTarget(core, state, shownUri);
    const subscriptions = subscriptionsOf(state);
    const subscription = subscriptions.get(keyOf(target));
    // Unsubscribing from what the session never subscribed to is not an error (nothing to stop).
    if (!subscription) return {};
    subscriptions.delete(keyOf(target));
    try {
      await (await subscription.handle).unsubscribe();
      return {};
    } catch (error) {
      throw requestFailure(`unsubscribe ${shownUri}`, error, logger);
    }
  }

  state.server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    core.registry.touch(state.id);
    return subscribeSession(request.params.uri, extra.signal);
  });
  state.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    core.registry.touch(state.id);
    return unsubscribeSession(request.params.uri);
  });
  changers.set(state, { subscribe: subscribeSession, unsubscribe: unsubscribeSession });
}

const changers = new WeakMap<SessionState, { subscribe: (uri: string) => Promise<unknown>; unsubscribe: (uri: string) => Promise<unknown> }>();

/** The URIs a session subscribed to, as it sent them (what a stored session keeps). */
export function subscribedUris(state: SessionState): string[] {
  return [...subscriptionsOf(state).values()].map((subscription) => subscription.shownUri).sort();
}

/**
 * Makes a session's subscriptions those of `uris` (a stored session's copy on another replica):
 * missing ones are subscribed upstream, extra ones dropped. Failures are logged, never thrown.
 */
export async function reconcileSubscriptions(state: SessionState, uris: readonly string[], logger: { debug(fields: object, message: string): void }): Promise<void> {
  const change = changers.get(state);
  if (!change) return;
  const current = new Set(subscribedUris(state));
  const wanted = new Set(uris);
  const work = [...wanted].filter((uri) => !current.has(uri)).map((uri) => change.subscribe(uri));
  work.push(...[...current].filter((uri) => !wanted.has(uri)).map((uri) => change.unsubscribe(uri)));
  for (const outcome of await Promise.allSettled(work)) {
    if (outcome.status === 'rejected') logger.debug({ err: outcome.reason, sessionId: state.id }, 'restoring a resource subscription failed');
  }
}
