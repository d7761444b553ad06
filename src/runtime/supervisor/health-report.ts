/**
 * @module runtime/supervisor/health-report
 * One plugin version's row of `supervisor.health()` (DESIGN §3.6 health): its state, live
 * pids, call statistics over the sliding window, breakers, crash record, how it was last
 * launched, and the health score. Reading it also clears a crash loop whose cooldown passed.
 */
import { healthScore } from '../health.ts';
import type { PluginHealth, PluginState } from './api.ts';
import { requestTimeoutMs, type SupervisorSettings } from './settings.ts';
import type { Entry } from './state.ts';

function stateOf(entry: Entry, crashLoop: boolean, running: boolean): PluginState {
  if (crashLoop) return 'crash-loop';
  if (running) return 'running';
  if (entry.instances.some((instance) => instance.state === 'starting')) return 'starting';
  if (entry.crashes.backoffRemaining() > 0) return 'backoff';
  return 'idle';
}

/** The health row of `entry`. */
export function healthOf(entry: Entry, settings: Pick<SupervisorSettings, 'defaultTimeoutMs'>): PluginHealth {
  const stats = entry.window.stats();
  const crashLoop = entry.crashes.inLoop();
  const ready = entry.instances.filter((instance) => instance.state === 'ready');
  const breaker = entry.breakers.plugin.state();
  const pids = ready.map((instance) => instance.connection?.pid).filter((pid): pid is number => pid !== undefined);
  const loopUntil = entry.crashes.loopUntil();
  return {
    pluginId: entry.spec.pluginId,
    pluginName: entry.spec.pluginName,
    version: entry.spec.version,
    state: stateOf(entry, crashLoop, ready.length > 0),
    pid: pids[0],
    pids,
    processes: entry.instances.length,
    startedAt: entry.lastStartedAt === undefined ? undefined : new Date(entry.lastStartedAt),
    calls: entry.totals.calls,
    failures: entry.totals.failures,
    successRate: stats.successRate,
    p50LatencyMs: stats.p50LatencyMs,
    p95LatencyMs: stats.p95LatencyMs,
    breaker,
    toolBreakers: entry.breakers.toolStates(),
    recentCrashes: entry.crashes.recentCount(),
    crashLoopUntil: loopUntil === undefined ? undefined : new Date(loopUntil),
    lastError: entry.crashes.lastError(),
    launch: entry.lastLaunch,
    score: healthScore({ stats, timeoutMs: requestTimeoutMs(entry.spec, settings), breakerOpen: breaker === 'open', crashLoop }),
  };
}
