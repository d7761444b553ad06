/**
 * @module runtime/supervisor/pool
 * Which connection serves a request (seed 003 "Connection Management": one warm connection per
 * plugin version, or a bounded pool, shared by every session). MCP multiplexes requests on a
 * connection, so a busy one still serves while the pool grows in the background; the global
 * `maxProcesses` cap evicts another plugin's least recently used idle process to make room.
 */
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import { sleep } from '../process-tree.ts';
import { untilAborted } from './deadline.ts';
import type { InstanceLifecycle } from './lifecycle.ts';
import type { EntryRegistry } from './registry.ts';
import type { SupervisorSettings } from './settings.ts';
import type { Entry, Gate, Instance } from './state.ts';

/** Hands out connections. */
export interface Pool {
  /**
   * An idle ready connection; else, below the pool size, a new one (started in the background
   * when a busy one can serve now); else the least busy; else waits for one that is starting.
   */
  acquire(entry: Entry, signal: AbortSignal): Promise<Instance>;
}

/** What the pool needs from the supervisor. */
export interface PoolOptions {
  settings: Pick<SupervisorSettings, 'poolSize' | 'maxProcesses'>;
  registry: Pick<EntryRegistry, 'live'>;
  lifecycle: Pick<InstanceLifecycle, 'start' | 'stop'>;
  gate: Gate;
}

/** Creates the pool. */
export function createPool(options: PoolOptions): Pool {
  const { settings, registry, lifecycle, gate } = options;

  /** Stops the least recently used idle process of another plugin; undefined when there is none. */
  function evictForRoom(entry: Entry): Promise<void> | undefined {
    const idle = registry
      .live()
      .filter((instance) => instance.state === 'ready' && instance.inFlight === 0 && instance.entry !== entry)
      .sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
    return idle ? lifecycle.stop(idle, 'evicted to respect maxProcesses') : undefined;
  }

  function processLimitError(entry: Entry): QuiverError {
    return new QuiverError(
      ErrorCodes.unavailable,
      `cannot start plugin '${entry.spec.pluginName}': ${settings.maxProcesses} plugin processes are running and all are busy (maxProcesses)`,
      { details: { reason: 'process_limit', maxProcesses: settings.maxProcesses } },
    );
  }

  async function acquire(entry: Entry, signal: AbortSignal): Promise<Instance> {
    for (;;) {
      gate.ensureOpen();
      if (entry.crashes.inLoop()) throw entry.crashes.loopError();
      const usable = entry.instances.filter((instance) => !instance.retire && instance.state !== 'stopping');
      const ready = usable.filter((instance) => instance.state === 'ready' && instance.connection?.isOpen());
      const leastBusy = ready.sort((a, b) => a.inFlight - b.inFlight)[0];
      if (leastBusy && leastBusy.inFlight === 0) return leastBusy;
      if (usable.length < settings.poolSize) {
        const roomForOne = registry.live().length < settings.maxProcesses;
        if (leastBusy) {
          if (roomForOne) lifecycle.start(entry);
          return leastBusy;
        }
        // Decide and start synchronously: concurrent callers must see the new instance.
        if (roomForOne) {
          const started = lifecycle.start(entry);
          await untilAborted(started.ready, signal);
          if (started.state === 'ready') return started;
          continue;
        }
        const eviction = usable.length === 0 ? evictForRoom(entry) : undefined;
        if (eviction) {
          await untilAborted(eviction, signal);
          continue;
        }
        if (usable.length === 0) throw processLimitError(entry);
      }
      if (leastBusy) return leastBusy;
      const starting = usable.find((instance) => instance.state === 'starting');
      if (starting) {
        await untilAborted(starting.ready, signal);
        continue;
      }
      await sleep(5, signal);
      if (signal.aborted) throw signal.reason;
    }
  }

  return { acquire };
}
