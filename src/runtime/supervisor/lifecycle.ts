/**
 * @module runtime/supervisor/lifecycle
 * The life of one connection (seed 003 "Performance and Connection Management"): start after
 * the crash backoff, count an unexpected end as a crash, stop when idle for `idleTimeoutMs` or
 * when retired by a settings change, and recycle a process that no longer answers a ping
 * (after a call timed out, and on the optional idle-ping interval): hung, not slow.
 */
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError, isQuiverError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { sleep } from '../process-tree.ts';
import type { Clock } from '../types.ts';
import type { UpstreamConnection } from '../upstream-connection.ts';
import type { AnnouncedToolList } from './api.ts';
import { listEverything } from './discovery.ts';
import { connectInEra } from './era.ts';
import type { Launcher } from './launcher.ts';
import { attachSessionRouting } from './session-routing.ts';
import type { SupervisorSettings } from './settings.ts';
import { closedError, inUse, type Entry, type Gate, type Instance } from './state.ts';

/** Starts and stops the instances of every entry. */
export interface InstanceLifecycle {
  /** Adds a starting instance to `entry` at once; it connects in the background. */
  start(entry: Entry): Instance;
  /** Stops an instance (a starting one is closed by its starter); idempotent. */
  stop(instance: Instance, why: string): Promise<void>;
  /** After a request: arms the idle timer, or stops a retired instance with nothing in flight. */
  scheduleIdle(instance: Instance): void;
  /** After a timeout: if the process no longer answers a ping, records a crash and recycles it. */
  checkAfterTimeout(instance: Instance): void;
  /** Pings every idle ready instance; one that does not answer is recorded as crashed and stopped. */
  pingIdle(instances: readonly Instance[]): Promise<void>;
}

/** What the lifecycle needs from the supervisor. */
export interface LifecycleOptions {
  settings: Pick<SupervisorSettings, 'idleTimeoutMs' | 'pingTimeoutMs' | 'defaultTimeoutMs'>;
  clock: Clock;
  logger: Logger;
  launcher: Launcher;
  gate: Gate;
  /** Told the plugin id and the announcing connection of each `notifications/tools/list_changed` (the catalog follows it, issue #24). */
  onToolListChanged?: (pluginId: string, announced: AnnouncedToolList) => void;
}

function stoppedError(entry: Entry): QuiverError {
  return new QuiverError(ErrorCodes.unavailable, `plugin '${entry.spec.pluginName}' was stopped`, { details: { reason: 'stopped' } });
}

/** Creates the instance lifecycle. */
export function createInstanceLifecycle(options: LifecycleOptions): InstanceLifecycle {
  const { settings, clock, logger, launcher, gate } = options;

  function remove(instance: Instance): void {
    const list = instance.entry.instances;
    const index = list.indexOf(instance);
    if (index >= 0) list.splice(index, 1);
    if (instance.idleTimer) clearTimeout(instance.idleTimer);
    instance.idleTimer = undefined;
  }

  async function connect(instance: Instance): Promise<UpstreamConnection> {
    const entry = instance.entry;
    // Restart backoff after a crash (the start continues even if the first caller gives up).
    const wait = entry.crashes.backoffRemaining();
    if (wait > 0) await sleep(wait);
    if (gate.isClosed()) throw closedError();
    if ((instance.state as Instance['state']) === 'stopping') throw stoppedError(entry);
    const connection = await connectInEra(launcher, entry, { redact: entry.redact, onLaunch: (description) => (entry.lastLaunch = description) });
    if (gate.isClosed() || (instance.state as Instance['state']) === 'stopping') {
      await connection.close();
      throw gate.isClosed() ? closedError() : stoppedError(entry);
    }
    instance.connection = connection;
    // A plugin announcing a new tool list: counted, so tool pinning screens it before the next call (issue #10).
    // The follower reads the new list from this very connection: a tool added at runtime lives only here.
    const announced: AnnouncedToolList = {
      version: entry.spec.version,
      async discover() {
        const startedAt = clock.now();
        const listing = await listEverything(connection, { timeoutMs: settings.defaultTimeoutMs });
        return { ...listing, durationMs: clock.now() - startedAt };
      },
    };
    connection.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      instance.toolListChanges += 1;
      options.onToolListChanged?.(entry.spec.pluginId, announced);
    });
    // Issue #12: sampling, elicitation, roots and log messages go to the session whose call caused them.
    attachSessionRouting(instance, logger);
    instance.state = 'ready';
    entry.lastStartedAt = connection.startedAt;
    scheduleIdle(instance);
    logger.info({ pluginId: entry.spec.pluginId, version: entry.spec.version, pid: connection.pid, launch: connection.launch }, 'plugin started');
    connection.onEnd((end) => {
      instance.endReason = end.reason;
      remove(instance);
      if (end.requested || gate.isClosed()) return;
      const stderr = connection.stderrTail();
      entry.crashes.record(`plugin '${entry.spec.pluginName}' stopped unexpectedly: ${end.reason}${stderr ? `; stderr: ${stderr.slice(-400)}` : ''}`);
    });
    return connection;
  }

  function start(entry: Entry): Instance {
    const instance: Instance = {
      entry,
      state: 'starting',
      ready: undefined as unknown as Promise<UpstreamConnection>,
      connection: undefined,
      inFlight: 0,
      holds: 0,
      lastUsedAt: clock.now(),
      idleTimer: undefined,
      endReason: undefined,
      retire: false,
      toolListChanges: 0,
    };
    entry.instances.push(instance);
    instance.ready = connect(instance);
    instance.ready.catch((error: unknown) => {
      const requested = instance.state === 'stopping';
      remove(instance);
      if (gate.isClosed() || requested) return;
      if (isQuiverError(error) && (error.details as { reason?: string } | undefined)?.reason === 'sandbox_unavailable') {
        // A host without a sandbox is not the plugin crashing: say why, but do not back off.
        entry.crashes.noteError(error.message);
        return;
      }
      entry.crashes.record(entry.redact(error instanceof Error ? error.message : String(error)));
    });
    return instance;
  }

  async function stop(instance: Instance, why: string): Promise<void> {
    if (instance.state === 'stopping') return;
    const wasStarting = instance.state === 'starting';
    instance.state = 'stopping';
    if (instance.idleTimer) clearTimeout(instance.idleTimer);
    logger.debug({ pluginId: instance.entry.spec.pluginId, pid: instance.connection?.pid, why }, 'stopping plugin process');
    if (wasStarting) {
      // The starter notices `stopping` and closes the connection itself.
      await instance.ready.catch(() => undefined);
      remove(instance);
      return;
    }
    await instance.connection?.close();
    remove(instance);
  }

  function scheduleIdle(instance: Instance): void {
    if (instance.idleTimer) clearTimeout(instance.idleTimer);
    instance.idleTimer = undefined;
    if (inUse(instance) || instance.state !== 'ready') return;
    if (instance.retire) {
      void stop(instance, 'retired');
      return;
    }
    instance.idleTimer = setTimeout(() => {
      if (!inUse(instance) && instance.state === 'ready') void stop(instance, 'idle');
    }, settings.idleTimeoutMs);
    instance.idleTimer.unref();
  }

  function checkAfterTimeout(instance: Instance): void {
    const connection = instance.connection;
    if (!connection || !connection.isOpen() || instance.state !== 'ready') return;
    connection.client.ping({ timeout: settings.pingTimeoutMs }).then(
      () => undefined,
      () => {
        if (instance.state !== 'ready') return;
        instance.entry.crashes.record(`plugin '${instance.entry.spec.pluginName}' stopped responding (ping failed after a timeout); recycled`);
        void stop(instance, 'unresponsive');
      },
    );
  }

  async function pingIdle(instances: readonly Instance[]): Promise<void> {
    for (const instance of instances) {
      if (instance.state !== 'ready' || instance.inFlight > 0 || !instance.connection) continue;
      try {
        await instance.connection.client.ping({ timeout: settings.pingTimeoutMs });
      } catch {
        if (instance.state !== 'ready' || instance.inFlight > 0) continue;
        instance.entry.crashes.record(`plugin '${instance.entry.spec.pluginName}' did not answer a health ping; recycled`);
        await stop(instance, 'ping failed');
      }
    }
  }

  return { start, stop, scheduleIdle, checkAfterTimeout, pingIdle };
}
