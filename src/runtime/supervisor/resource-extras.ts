/**
 * @module runtime/supervisor/resource-extras
 * The parts of a plugin's MCP surface beyond tools, resources and prompts (issue #12):
 * resource templates, `completion/complete`, and resource subscriptions.
 *
 * Subscriptions are per connection in MCP, and one connection per plugin version serves every
 * session (seed 003 "Connection Management"). So the supervisor subscribes upstream once per
 * (plugin version, URI), counts the listeners (one per gateway session), routes each
 * `notifications/resources/updated` to that URI's listeners, and unsubscribes upstream when
 * the last listener leaves. A subscribed connection counts as busy: it is not stopped for
 * idleness (its updates would silently stop), nor retired by a settings change while
 * subscribed. When it crashes, the subscription is renewed on the next connection while
 * listeners remain; a stop Quiver asked for ends it.
 */
import {
  ResourceUpdatedNotificationSchema,
  type CompleteResult,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { UpstreamSpecInput } from '../types.ts';
import type { UpstreamConnection } from '../upstream-connection.ts';
import type { CallOptions, ResourceExtras, ResourceSubscription, ResourceUpdateListener } from './api.ts';
import type { InstanceLifecycle } from './lifecycle.ts';
import type { Requests } from './requests.ts';
import { progressMeta } from './session-routing.ts';
import type { Entry, Instance } from './state.ts';

export type { ResourceExtras, ResourceSubscription, ResourceUpdateListener } from './api.ts';

/** One upstream subscription shared by its listeners. */
interface Upstream {
  entry: Entry;
  uri: string;
  listeners: Set<ResourceUpdateListener>;
  /** The connection holding it, once subscribed. */
  instance: Instance | undefined;
  /** Settles when the upstream subscribe has been answered. */
  ready: Promise<void>;
}

/** What the extras need from the supervisor. */
export interface ResourceExtrasOptions {
  requests: Requests;
  lifecycle: Pick<InstanceLifecycle, 'scheduleIdle'>;
  registry: { resolve(input: UpstreamSpecInput): Entry };
  logger: Logger;
}

const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };

/** Creates the templates, completion and subscription requests. */
export function createResourceExtras(options: ResourceExtrasOptions): ResourceExtras {
  const { requests, lifecycle, registry, logger } = options;
  const upstreams = new Map<string, Upstream>();
  /** Connections whose update handler is installed. */
  const routed = new WeakSet<UpstreamConnection>();

  const keyOf = (entry: Entry, uri: string) => `${entry.key}\n${uri}`;

  function route(connection: UpstreamConnection, entry: Entry): void {
    if (routed.has(connection)) return;
    routed.add(connection);
    connection.client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
      const upstream = upstreams.get(keyOf(entry, notification.params.uri));
      if (!upstream || upstream.instance?.connection !== connection) return;
      for (const listener of [...upstream.listeners]) {
        try {
          listener(notification.params.uri);
        } catch (error) {
          logger.warn({ err: error, pluginId: entry.spec.pluginId }, 'a resource update listener failed');
        }
      }
    });
  }

  /** Subscribes upstream on a pooled connection and holds that connection while subscribed. */
  async function subscribeUpstream(upstream: Upstream, callOptions: CallOptions): Promise<void> {
    const { entry, uri } = upstream;
    await requests.simple(entry.spec, 'resources/subscribe', callOptions, () => async (connection, signal, remaining) => {
      if (!connection.client.getServerCapabilities()?.resources?.subscribe) {
        throw new QuiverError(ErrorCodes.invalidInput, `plugin '${entry.spec.pluginName}' does not support resource subscriptions`);
      }
      route(connection, entry);
      await connection.client.subscribeResource({ uri }, { signal, timeout: remaining() });
      const instance = entry.instances.find((candidate) => candidate.connection === connection);
      if (!instance) return;
      // Held for as long as the subscription lasts: never stopped as idle.
      instance.holds += 1;
      upstream.instance = instance;
      connection.onEnd((end) => renewAfterEnd(upstream, instance, end.requested));
    });
  }

  /**
   * The holding connection ended. After a crash or a dropped link the subscription is renewed
   * on a new connection while listeners remain (best effort). After a stop Quiver asked for
   * (plugin stopped, disabled, removed, supervisor closing) it is not: renewing would start
   * the plugin again against that decision; its listeners then hear nothing more.
   */
  function renewAfterEnd(upstream: Upstream, instance: Instance, requested: boolean): void {
    if (upstream.instance !== instance) return;
    upstream.instance = undefined;
    if (requested) {
      logger.debug({ pluginId: upstream.entry.spec.pluginId, uri: upstream.uri }, 'resource subscription ended with its stopped plugin');
      return;
    }
    if (upstream.listeners.size === 0 || upstreams.get(keyOf(upstream.entry, upstream.uri)) !== upstream) return;
    upstream.ready = subscribeUpstream(upstream, {}).catch((error: unknown) => {
      logger.warn({ err: error, pluginId: upstream.entry.spec.pluginId, uri: upstream.uri }, 'renewing a resource subscription failed');
    });
  }

  async function release(upstream: Upstream): Promise<void> {
    upstreams.delete(keyOf(upstream.entry, upstream.uri));
    await upstream.ready.catch(() => undefined);
    const instance = upstream.instance;
    upstream.instance = undefined;
    if (!instance) return;
    instance.holds -= 1;
    try {
      if (instance.connection?.isOpen()) await instance.connection.client.unsubscribeResource({ uri: upstream.uri }, { timeout: 5_000 });
    } catch (error) {
      logger.debug({ err: error, pluginId: upstream.entry.spec.pluginId, uri: upstream.uri }, 'unsubscribing upstream failed');
    } finally {
      lifecycle.scheduleIdle(instance);
    }
  }

  async function subscribeResource(spec: UpstreamSpecInput, uri: string, listener: ResourceUpdateListener, callOptions: CallOptions = {}): Promise<ResourceSubscription> {
    const entry = registry.resolve(spec);
    const key = keyOf(entry, uri);
    let upstream = upstreams.get(key);
    if (!upstream) {
      const created: Upstream = { entry, uri, listeners: new Set(), instance: undefined, ready: Promise.resolve() };
      created.ready = subscribeUpstream(created, callOptions);
      upstreams.set(key, created);
      upstream = created;
    }
    upstream.listeners.add(listener);
    const held = upstream;
    try {
      await held.ready;
    } catch (error) {
      held.listeners.delete(listener);
      if (upstreams.get(key) === held) upstreams.delete(key);
      throw error;
    }
    let active = true;
    return {
      async unsubscribe() {
        if (!active) return;
        active = false;
        held.listeners.delete(listener);
        if (held.listeners.size === 0 && upstreams.get(key) === held) await release(held);
      },
    };
  }

  return {
    listResourceTemplates(spec, callOptions = {}) {
      return requests.simple(spec, 'resources/templates/list', callOptions, () => async (connection, signal, remaining) => {
        if (!connection.client.getServerCapabilities()?.resources) return [];
        const templates: ResourceTemplate[] = [];
        let cursor: string | undefined;
        const seen = new Set<string>();
        for (let page = 0; page < 100; page += 1) {
          const result = await connection.client.listResourceTemplates(cursor ? { cursor } : {}, { signal, timeout: remaining() });
          templates.push(...result.resourceTemplates);
          if (!result.nextCursor || seen.has(result.nextCursor)) break;
          seen.add(result.nextCursor);
          cursor = result.nextCursor;
        }
        return templates;
      });
    },

    complete(spec, params, callOptions = {}) {
      // Issue #12: with its caller, a completion holds a claim like a read, so the plugin's requests meanwhile reach that session.
      return requests.forwarded(spec, 'completion/complete', callOptions, async (connection, { progressToken, ...options }) => {
        if (!connection.client.getServerCapabilities()?.completions) return EMPTY_COMPLETION;
        return connection.client.complete({ ...params, ...progressMeta(progressToken) }, options);
      });
    },

    subscribeResource,

    resourceSubscriptions: () => [...upstreams.values()].map((upstream) => ({ entry: upstream.entry.key, uri: upstream.uri, listeners: upstream.listeners.size })),
  };
}
