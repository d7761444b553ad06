/**
 * @module trust/runtime-trust
 * Dynamic trust over the store (seed 000 §4.3): reads each plugin's calls, denied egress and
 * user reports in the window, stores its runtime score, and acts when a plugin crosses the
 * threshold: the effective level changes at the plugin's next start (the caller's onChange
 * drops cached launch specs; a running process is never given more privilege), and falling
 * below queues a re-verification.
 */
import type { Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import {
  deniedEgressCounts,
  listRuntimeTrust,
  runtimeCallStats,
  upsertRuntimeTrust,
  userReportCounts,
  type RuntimeTrustRow,
} from '../store/repositories/trust.ts';
import { runtimeTrustScore } from './dynamic.ts';
import type { TrustChange, TrustSettings } from './types.ts';

export interface RuntimeTrustDeps {
  db: Database;
  logger: Logger;
  now: () => Date;
  settings: TrustSettings;
  changed: (change: TrustChange) => void;
  requestReverification: (pluginId: string, reason: string) => Promise<void>;
}

/** Recomputes the runtime trust of `pluginIds` and returns the stored rows. */
export async function evaluateRuntimeTrust(deps: RuntimeTrustDeps, pluginIds: readonly string[]): Promise<RuntimeTrustRow[]> {
  const { db, settings } = deps;
  const until = deps.now();
  const since = new Date(until.getTime() - settings.windowMs);
  const [stats, denied, reports, previous] = await Promise.all([
    runtimeCallStats(db, since, new Date(until.getTime() + 1)),
    deniedEgressCounts(db, since),
    userReportCounts(db, since),
    listRuntimeTrust(db, pluginIds),
  ]);
  const statsOf = new Map(stats.map((row) => [row.pluginId, row]));
  const rows: RuntimeTrustRow[] = [];
  for (const pluginId of pluginIds) {
    const call = statsOf.get(pluginId);
    const result = runtimeTrustScore(
      {
        calls: call?.calls ?? 0,
        failures: call?.failures ?? 0,
        meanLatencyMs: call?.meanLatencyMs ?? 0,
        stddevLatencyMs: call?.stddevLatencyMs ?? 0,
        deniedEgress: denied.get(pluginId) ?? 0,
        userReports: reports.get(pluginId) ?? 0,
      },
      settings.minCalls,
    );
    const row: RuntimeTrustRow = { pluginId, score: result.score, belowThreshold: result.score < settings.runtimeThreshold, factors: result.factors, computedAt: until };
    await upsertRuntimeTrust(db, row);
    rows.push(row);
    const before = previous.get(pluginId)?.belowThreshold ?? false;
    if (before !== row.belowThreshold) {
      deps.logger.warn({ pluginId, score: row.score, threshold: settings.runtimeThreshold, factors: row.factors }, row.belowThreshold ? 'runtime trust fell below the threshold: more isolation at the next start' : 'runtime trust recovered');
      deps.changed({ kind: 'runtime', pluginId });
      if (row.belowThreshold) await deps.requestReverification(pluginId, `runtime trust ${row.score} below threshold ${settings.runtimeThreshold}`);
    }
  }
  return rows;
}
