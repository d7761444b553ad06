/**
 * @module runtime/supervisor/pool
 * Which connection serves a request (seed 003 "Connection Management": one warm connection per
 * plugin version, or a bounded pool, shared by every session). MCP multiplexes requests on a
 * connection, so a busy one still serves while the pool grows in the background; the global
 * `maxProcesses` cap evicts another plugin's least recently used idle process to make room.
 * A session whose client answers requests (sampling, elicitation, roots) never shares a
 * connection with another session while its calls run (issue #12): it gets an idle one, a new
 * one up to `poolSize`, or waits its turn.
 */
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import { sleep } from '../process-tree.ts';
import { untilAborted } from './deadline.ts';
import type { InstanceLifecycle } from './lifecycle.ts';
import type { EntryRegistry } from './registry.ts';
import { claimReleased, claimsOf, compatible, onCallPaused, registerClaim, type CallClaim } from './session-routing.ts';
import type { SupervisorSettings } from './settings.ts';
import { inUse, type Entry, type Gate, type Instance } from './state.ts';

/** Hands out connections. */
export interface Pool {
  /**
   * An idle ready connection; else, below the pool size, a new one (started in the background
   * when a busy one can serve now); else the least busy; else waits for one that is starting.
   * With a `claim` (a tools/call of a gateway session), only connections the claim may share
   * (`session-routing.ts`) count, and the claim is registered on the one handed out.
   */
  acquire(entry: Entry, signal: AbortSignal, claim?: CallClaim): Promise<Instance>;
}

/** What the pool needs from the supervisor. */
export interface PoolOptions {
  settings: Pick<SupervisorSettings, 'poolSize' | 'maxPoolSize' | 'maxProcesses'>;
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
      .filter((instance) => instance.state === 'ready' && !inUse(instance) && instance.entry !== entry)
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

  /** True when a call on the instance waits on a client that answers by retrying (a paused 2026 call). */
  function heldByPausedCall(instance: Instance): boolean {
    return [...claimsOf(instance)].some((held) => held.exclusive && held.caller?.pauses === true && (held.waitingOnClient ?? 0) > 0);
  }

  /** Room for one more process of `entry` beyond its pool (paused calls hold theirs). */
  function roomBeyondPool(entry: Entry, usable: Instance[]): boolean {
    return usable.length < settings.maxPoolSize && registry.live().length < settings.maxProcesses && usable.every((instance) => instance.state !== 'ready' || heldByPausedCall(instance));
  }

  /** A call paused on a 2026 client's input: one process kept ready for whoever it blocks (no wait for a start). */
  function standBy(entry: Entry): void {
    const usable = entry.instances.filter((instance) => !instance.retire && instance.state !== 'stopping');
    if (usable.some((instance) => instance.state === 'starting') || !roomBeyondPool(entry, usable)) return;
    lifecycle.start(entry);
  }

  async function acquire(entry: Entry, signal: AbortSignal, claim?: CallClaim): Promise<Instance> {
    onCallPaused(entry, () => standBy(entry));
    // The claim is registered before returning, in the same turn as the decision: a concurrent
    // caller already sees it (issue #12, a session that answers requests has its connection alone).
    const take = (instance: Instance): Instance => {
      if (claim) registerClaim(instance, claim);
      return instance;
    };
    for (;;) {
      gate.ensureOpen();
      if (entry.crashes.inLoop()) throw entry.crashes.loopError();
      const usable = entry.instances.filter((instance) => !instance.retire && instance.state !== 'stopping');
      const ready = usable.filter((instance) => instance.state === 'ready' && instance.connection?.isOpen() && compatible(instance, claim));
      const leastBusy = ready.sort((a, b) => a.inFlight - b.inFlight)[0];
      if (leastBusy && leastBusy.inFlight === 0) return take(leastBusy);
      if (usable.length < settings.poolSize) {
        const roomForOne = registry.live().length < settings.maxProcesses;
        if (leastBusy) {
          if (roomForOne) lifecycle.start(entry);
          return take(leastBusy);
        }
        // Decide and start synchronously: concurrent callers must see the new instance.
        if (roomForOne) {
          const started = lifecycle.start(entry);
          await untilAborted(started.ready, signal);
          if (started.state === 'ready' && compatible(started, claim)) return take(started);
          continue;
        }
        const eviction = usable.length === 0 ? evictForRoom(entry) : undefined;
        if (eviction) {
          await untilAborted(eviction, signal);
          continue;
        }
        if (usable.length === 0) throw processLimitError(entry);
      }
      if (leastBusy) return take(leastBusy);
      const starting = usable.find((instance) => instance.state === 'starting');
      if (starting) {
        await untilAborted(starting.ready, signal);
        continue;
      }
      // Issue #24: a connection held by a call paused on a 2026 client's input may stay held until
      // that client retries (minutes, or never): callers it blocks get another process, up to
      // maxPoolSize, instead of waiting on a client that may not come back.
      if (roomBeyondPool(entry, usable)) {
        const started = lifecycle.start(entry);
        await untilAborted(started.ready, signal);
        if (started.state === 'ready' && compatible(started, claim)) return take(started);
        continue;
      }
      // Every connection is busy with a session this claim may not share one with: wait its turn.
      if (claim && usable.some((instance) => instance.state === 'ready' && !compatible(instance, claim))) {
        await claimReleased(entry, signal, 250);
        continue;
      }
      await sleep(5, signal);
      if (signal.aborted) throw signal.reason;
    }
  }

  return { acquire };
}
