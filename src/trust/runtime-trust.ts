/**
 * @module trust/runtime-trust
 * Dynamic trust over the store (seed 000 §4.3): reads each plugin's calls, denied egress (internal
 * targets apart, trust/dynamic.ts) and user reports in the window, stores its runtime score, and
 * acts when a plugin crosses the threshold: the change is reported with its direction (the app
 * drops cached launch specs and, on a fall, retires the plugin's running processes at once so
 * they restart under the stricter profile: trust/enforcement.ts; a running process is never given
 * more privilege), and falling below queues a re-verification. The crossing is recorded in the
 * stored row (`factors.decision`: who, what, why, when) and logged.
 */
import { internalHostKind } from '../core/internal-address.ts';
import type { Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import {
  deniedEgressTargets,
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

/** Denied egress per plugin: all decisions, those to targets outside, and the distinct internal targets. */
interface DeniedSummary {
  total: number;
  other: number;
  internalTargets: string[];
}

function summariseDenied(rows: ReadonlyArray<{ pluginId: string; host: string; port: number; count: number }>): Map<string, DeniedSummary> {
  const out = new Map<string, DeniedSummary>();
  for (const row of rows) {
    const summary = out.get(row.pluginId) ?? { total: 0, other: 0, internalTargets: [] };
    summary.total += row.count;
    if (internalHostKind(row.host) !== undefined) summary.internalTargets.push(row.port === 0 ? `${row.host} (name lookup)` : `${row.host}:${row.port}`);
    else summary.other += row.count;
    out.set(row.pluginId, summary);
  }
  return out;
}

/** Recomputes the runtime trust of `pluginIds` and returns the stored rows. */
export async function evaluateRuntimeTrust(deps: RuntimeTrustDeps, pluginIds: readonly string[]): Promise<RuntimeTrustRow[]> {
  const { db, settings } = deps;
  const until = deps.now();
  const since = new Date(until.getTime() - settings.windowMs);
  const [stats, denied, reports, previous] = await Promise.all([
    runtimeCallStats(db, since, new Date(until.getTime() + 1)),
    deniedEgressTargets(db, since).then(summariseDenied),
    userReportCounts(db, since),
    listRuntimeTrust(db, pluginIds),
  ]);
  const statsOf = new Map(stats.map((row) => [row.pluginId, row]));
  const rows: RuntimeTrustRow[] = [];
  for (const pluginId of pluginIds) {
    const call = statsOf.get(pluginId);
    const refused = denied.get(pluginId);
    const result = runtimeTrustScore(
      {
        calls: call?.calls ?? 0,
        failures: call?.failures ?? 0,
        meanLatencyMs: call?.meanLatencyMs ?? 0,
        stddevLatencyMs: call?.stddevLatencyMs ?? 0,
        deniedEgress: refused?.total ?? 0,
        deniedInternalTargets: refused?.internalTargets.length ?? 0,
        deniedOther: refused?.other ?? 0,
        userReports: reports.get(pluginId) ?? 0,
      },
      settings.minCalls,
    );
    const belowThreshold = result.score < settings.runtimeThreshold;
    const before = previous.get(pluginId);
    const crossed = (before?.belowThreshold ?? false) !== belowThreshold;
    const why = `runtime trust ${result.score} ${belowThreshold ? 'below' : 'back at or above'} threshold ${settings.runtimeThreshold}` + (refused && refused.internalTargets.length > 0 ? `; denied internal targets: ${refused.internalTargets.slice(0, 5).join(', ')}` : '');
    // The last crossing stays on the row until the next one: who decided what, why and when.
    const decision = crossed
      ? { by: 'dynamic trust', action: belowThreshold ? 're-sandboxed: one level less, running processes restarted, re-verification queued' : 'recovered: its level applies again at its next start', why, at: until.toISOString() }
      : (before?.factors as { decision?: unknown } | undefined)?.decision;
    const row: RuntimeTrustRow = { pluginId, score: result.score, belowThreshold, factors: { ...result.factors, ...(decision === undefined ? {} : { decision }) }, computedAt: until };
    await upsertRuntimeTrust(db, row);
    rows.push(row);
    if (crossed) {
      deps.logger.warn({ pluginId, score: row.score, threshold: settings.runtimeThreshold, factors: row.factors, by: 'dynamic trust' }, belowThreshold ? 'runtime trust fell below the threshold: re-sandboxing the plugin' : 'runtime trust recovered');
      deps.changed({ kind: 'runtime', pluginId, belowThreshold });
      if (belowThreshold) await deps.requestReverification(pluginId, why);
    }
  }
  return rows;
}
