/**
 * @module runtime/supervisor
 * The one owner of every plugin process (DESIGN §3.6; seed 003 "Performance and Connection
 * Management", "Error Handling and Security"): lazy start on first use, one warm MCP
 * connection per plugin version (or a bounded pool) shared by all sessions, idle shutdown,
 * restart with exponential backoff and a crash-loop stop, a global process cap, and for every
 * call a timeout, the PID's retry policy (idempotent tools only), circuit breakers, token
 * buckets and concurrency caps. Isolation follows trust (`isolation-policy.ts`, `sandbox.ts`).
 *
 * This file only assembles the parts in `supervisor/` (see the runtime README for the map):
 * `launcher` (sandbox, cgroups, state folders), `lifecycle` (start, stop, idle, liveness),
 * `registry` (an entry per plugin version), `pool` (which connection serves), `requests` and
 * `call-tool` (the call path), `discovery`, and `health-report`.
 *
 * @example
 * const supervisor = createSupervisor({ onCall: (event) => analytics.record(event) });
 * const result = await supervisor.callTool(spec, 'search', { query: 'x' });
 * await supervisor.close();
 */
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../core/logger.ts';
import { systemClock } from './types.ts';
import { listAllPrompts, listAllResources, listAllTools } from './upstream-connection.ts';
import type { AnnouncedToolList, Supervisor, SupervisorOptions } from './supervisor/api.ts';
import { createToolCaller } from './supervisor/call-tool.ts';
import { createDiscoverer } from './supervisor/discovery.ts';
import { healthOf } from './supervisor/health-report.ts';
import { createLauncher } from './supervisor/launcher.ts';
import { createInstanceLifecycle } from './supervisor/lifecycle.ts';
import { createPool } from './supervisor/pool.ts';
import { createEntryRegistry } from './supervisor/registry.ts';
import { createRequests } from './supervisor/requests.ts';
import { createVersionRetirement } from './supervisor/retire.ts';
import { createResourceExtras } from './supervisor/resource-extras.ts';
import { createToolTasks } from './supervisor/tool-tasks.ts';
import { notifyRootsChanged, progressMeta, withCallerCapabilities } from './supervisor/session-routing.ts';
import { resolveSettings } from './supervisor/settings.ts';
import { createGate } from './supervisor/state.ts';

export type { AnnouncedToolList, CallOptions, Discovery, PluginHealth, PluginState, SandboxOptions, Supervisor, SupervisorOptions } from './supervisor/api.ts';

/** Creates the plugin supervisor. Nothing starts until the first call. */
export function createSupervisor(options: SupervisorOptions = {}): Supervisor {
  const logger = (options.logger ?? silentLogger).child({ component: 'runtime' });
  const clock = options.clock ?? systemClock;
  const settings = resolveSettings(options);
  const id = randomBytes(8).toString('hex');
  const gate = createGate();
  const launcher = createLauncher({ supervisorId: id, sandbox: options.sandbox ?? {}, startTimeoutMs: settings.startTimeoutMs, stopGraceMs: settings.stopGraceMs, clock, logger, remoteAuthorization: options.remoteAuthorization, remoteFetch: options.remoteFetch });
  // Listeners of plugins announcing a new tool list (composition/tool-list-follower syncs the catalog).
  const toolListListeners = new Set<(pluginId: string, announced: AnnouncedToolList) => void>();
  const onToolListChanged = (pluginId: string, announced: AnnouncedToolList): void => {
    for (const listener of toolListListeners) {
      try {
        listener(pluginId, announced);
      } catch (error) {
        logger.warn({ err: error, pluginId }, 'tools/list_changed listener threw');
      }
    }
  };
  const lifecycle = createInstanceLifecycle({ settings, clock, logger, launcher, gate, onToolListChanged });
  const registry = createEntryRegistry({ settings, clock, logger, stop: lifecycle.stop, sharedLimits: options.sharedLimits });
  const pool = createPool({ settings, registry, lifecycle, gate });
  const requests = createRequests({ settings, clock, gate, registry, pool, lifecycle });
  const callTool = createToolCaller({ settings, clock, logger, gate, registry, requests, onCall: options.onCall });
  const discoverer = createDiscoverer({ settings, clock, gate, registry, launcher });
  const resourceExtras = createResourceExtras({ requests, lifecycle, registry, logger });
  const toolTasks = createToolTasks({ requests, lifecycle, defaultTimeoutMs: settings.defaultTimeoutMs });

  const pingTimer = settings.pingIntervalMs > 0 ? setInterval(() => void lifecycle.pingIdle(registry.live()), settings.pingIntervalMs) : undefined;
  pingTimer?.unref();

  return {
    id,
    callTool,
    onToolListChanged(listener) {
      toolListListeners.add(listener);
      return () => void toolListListeners.delete(listener);
    },
    listTools(spec, callOptions = {}) {
      return requests.simple(spec, 'tools/list', callOptions, (entry) => async (connection, signal, remaining) => {
        const tools = await listAllTools(connection.client, { timeoutMs: remaining(), signal });
        entry.annotations = new Map(tools.map((tool) => [tool.name, tool.annotations]));
        return tools;
      });
    },
    listResources(spec, callOptions = {}) {
      return requests.simple(spec, 'resources/list', callOptions, () => (connection, signal, remaining) => listAllResources(connection.client, { timeoutMs: remaining(), signal }));
    },
    readResource(spec, uri, callOptions = {}) {
      // Issue #24: a 2026-07-28 plugin gets the calling client's capabilities, as on tools/call.
      return requests.forwarded(spec, 'resources/read', callOptions, (connection, { progressToken, ...options }) =>
        connection.client.readResource(withCallerCapabilities({ uri, ...progressMeta(progressToken) }, callOptions.caller, connection.era), options),
      );
    },
    listPrompts(spec, callOptions = {}) {
      return requests.simple(spec, 'prompts/list', callOptions, () => (connection, signal, remaining) => listAllPrompts(connection.client, { timeoutMs: remaining(), signal }));
    },
    getPrompt(spec, name, args, callOptions = {}) {
      return requests.forwarded(spec, 'prompts/get', callOptions, (connection, { progressToken, ...options }) =>
        connection.client.getPrompt(withCallerCapabilities({ name, arguments: args, ...progressMeta(progressToken) }, callOptions.caller, connection.era), options),
      );
    },
    ...resourceExtras,
    ...toolTasks,
    discover: discoverer.discover,
    async stop(pluginId) {
      const instances = registry.forPlugin(pluginId).flatMap((entry) => [...entry.instances]);
      await Promise.all(instances.map((instance) => lifecycle.stop(instance, 'stop requested')));
    },
    rootsChanged: (sessionId) => notifyRootsChanged(registry.live(), sessionId, logger),
    retireVersion: createVersionRetirement({ registry, lifecycle }),
    reset(pluginId) {
      for (const entry of registry.forPlugin(pluginId)) {
        entry.crashes.reset();
        entry.breakers.reset();
      }
    },
    health: () => registry.all().map((entry) => healthOf(entry, settings)),
    processes: () => registry.live().map((instance) => ({ pluginId: instance.entry.spec.pluginId, version: instance.entry.spec.version, pid: instance.connection?.pid, toolListChanges: instance.toolListChanges })),
    host: launcher.host,
    hiddenPaths: () => [...(options.sandbox?.hiddenPaths ?? []), ...(options.sandbox?.stateRoot === undefined ? [] : [options.sandbox.stateRoot])],
    async close() {
      if (!gate.close()) return;
      if (pingTimer) clearInterval(pingTimer);
      const instances = registry.all().flatMap((entry) => [...entry.instances]);
      await Promise.all([...instances.map((instance) => lifecycle.stop(instance, 'supervisor closing')), discoverer.close()]);
      launcher.dispose();
    },
  };
}
