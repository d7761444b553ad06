/**
 * @module trust/enforcement
 * Dynamic trust that acts within seconds (issue #23). Two duties:
 *
 * - `observe(decision)`: a denied egress decision schedules an evaluation of that plugin's
 *   runtime trust shortly after (coalesced per plugin), instead of waiting for the periodic
 *   evaluation (minutes): a dormant plugin that wakes and reaches for 127.0.0.1:5432 is judged
 *   on that attempt at once.
 * - `resandbox(pluginId)`: when its runtime trust falls below the threshold, its running
 *   processes are stopped now (calls in flight fail: they are the misbehaving ones), so its next
 *   call starts a process under the stricter profile its effective level now gives. For a few
 *   seconds after, any process of the plugin still running with looser isolation than that level
 *   (one a call started from a launch spec cached before the change reached the gateway) is
 *   stopped again.
 *
 * Every action is logged with who (dynamic trust), what and why; the crossing itself is stored
 * on the plugin's runtime-trust row (runtime-trust.ts).
 */
import type { Logger } from '../core/logger.ts';
import { isolationPolicyFor } from '../runtime/isolation-policy.ts';
import type { PluginEgressDecision, PluginHealth } from '../runtime/supervisor/api.ts';
import type { TrustLevel } from '../runtime/types.ts';

/** What enforcement needs from the supervisor. */
export interface EnforcementSupervisor {
  stop(pluginId: string): Promise<void>;
  health(): PluginHealth[];
}

/** What enforcement needs from the trust service. */
export interface EnforcementTrust {
  evaluate(pluginId: string): Promise<unknown>;
  launchTrust(pluginId: string): Promise<{ trustLevel: TrustLevel; egress: unknown[] | undefined }>;
}

/** One re-sandboxing, as reported to `onResandboxed` (the bench measures with it). */
export interface ResandboxEvent {
  pluginId: string;
  level: TrustLevel;
  /** Processes of the plugin that were running when it was re-sandboxed. */
  stopped: number;
  at: Date;
}

/** Options of `createTrustEnforcement`. */
export interface TrustEnforcementOptions {
  trust: EnforcementTrust;
  supervisor: EnforcementSupervisor;
  logger: Logger;
  /** Wait this long after a denied decision before evaluating (more decisions of the burst join), ms. */
  evaluateDelayMs?: number;
  /** Keep stopping looser processes of a re-sandboxed plugin this long, ms (covers cached launch specs). */
  watchMs?: number;
  onResandboxed?: (event: ResandboxEvent) => void;
}

/** Dynamic-trust enforcement (see the module comment). */
export interface TrustEnforcement {
  observe(decision: PluginEgressDecision): void;
  resandbox(pluginId: string): Promise<ResandboxEvent | undefined>;
  close(): Promise<void>;
}

const networkRank = { none: 0, 'allow-list': 1, host: 2 } as const;

/** True when a running process is isolated less than `level` requires. */
function looserThan(health: PluginHealth, level: TrustLevel, egressRules: boolean): boolean {
  if (health.processes === 0 || health.launch === undefined) return false;
  const policy = isolationPolicyFor(level, {}, { egressRules });
  if (policy.sandbox && !health.launch.sandboxed) return true;
  return networkRank[health.launch.network] > networkRank[policy.network];
}

/** Creates the enforcement; `close()` cancels what is scheduled and waits for what runs. */
export function createTrustEnforcement(options: TrustEnforcementOptions): TrustEnforcement {
  const { trust, supervisor, logger } = options;
  const evaluateDelayMs = options.evaluateDelayMs ?? 200;
  const watchMs = options.watchMs ?? 15_000;
  const pending = new Map<string, NodeJS.Timeout>();
  const watches = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<unknown>>();
  let closed = false;

  const track = (work: Promise<unknown>): void => {
    running.add(work);
    void work.finally(() => running.delete(work));
  };

  function watch(pluginId: string, level: TrustLevel, egressRules: boolean, until: number): void {
    const timer = setTimeout(() => {
      watches.delete(timer);
      if (closed) return;
      const loose = supervisor.health().filter((entry) => entry.pluginId === pluginId && looserThan(entry, level, egressRules));
      if (loose.length > 0) {
        logger.warn({ pluginId, level, by: 'dynamic trust' }, 'a process of a re-sandboxed plugin still ran with looser isolation; stopped');
        track(supervisor.stop(pluginId));
      }
      if (Date.now() < until) watch(pluginId, level, egressRules, until);
    }, 250);
    timer.unref();
    watches.add(timer);
  }

  async function resandbox(pluginId: string): Promise<ResandboxEvent | undefined> {
    if (closed) return undefined;
    const launch = await trust.launchTrust(pluginId);
    const stopped = supervisor.health().filter((entry) => entry.pluginId === pluginId).reduce((sum, entry) => sum + entry.processes, 0);
    await supervisor.stop(pluginId);
    const event = { pluginId, level: launch.trustLevel, stopped, at: new Date() };
    logger.warn({ ...event, by: 'dynamic trust' }, 'plugin re-sandboxed: its processes were stopped and restart under the stricter profile');
    watch(pluginId, launch.trustLevel, (launch.egress?.length ?? 0) > 0, Date.now() + watchMs);
    options.onResandboxed?.(event);
    return event;
  }

  return {
    observe(decision) {
      if (decision.allowed || closed || pending.has(decision.pluginId)) return;
      const timer = setTimeout(() => {
        pending.delete(decision.pluginId);
        track(trust.evaluate(decision.pluginId).catch((error: unknown) => logger.warn({ err: error, pluginId: decision.pluginId }, 'runtime trust evaluation after a denied connection failed')));
      }, evaluateDelayMs);
      timer.unref();
      pending.set(decision.pluginId, timer);
    },

    resandbox(pluginId) {
      const work = resandbox(pluginId).catch((error: unknown) => {
        logger.warn({ err: error, pluginId }, 'plugin could not be re-sandboxed');
        return undefined;
      });
      track(work);
      return work;
    },

    async close() {
      closed = true;
      for (const timer of [...pending.values(), ...watches]) clearTimeout(timer);
      pending.clear();
      watches.clear();
      await Promise.allSettled([...running]);
    },
  };
}
