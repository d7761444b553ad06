/**
 * @module rollouts/judge
 * The rollback judge (seed 000 §5.1 "rollback automatically if health degrades", §5.2 "when a
 * circuit opens, traffic automatically routes to the healthy slot"): the canary against the
 * stable slot over the same window. Pure: stats in, verdict out.
 *
 * - An open breaker or a crash on the canary rolls back at once (no sample size needed).
 * - Error rate: with at least `minSamples` canary calls, the canary's failure share may exceed
 *   the stable slot's by at most `maxErrorRateDelta` (the stable share counts only once it has
 *   `minSamples` calls itself; before that it is taken as 0, the strict reading).
 * - Latency: with `minSamples` calls on both slots, the canary's p95 may be at most
 *   `maxP95Ratio` times the stable p95, unless the difference is under `minP95DeltaMs`.
 */
import type { RolloutSettings, SlotStats } from './types.ts';

/** `degraded`: roll back; `healthy`: enough evidence and nothing wrong; `waiting`: too few calls to tell. */
export interface Verdict {
  verdict: 'degraded' | 'healthy' | 'waiting';
  reasons: string[];
  /** 0–100: the canary's health (seed 000 §5.1 "Health: 95/100"). */
  canaryScore: number;
  stableScore: number;
}

const rate = (stats: SlotStats) => (stats.calls === 0 ? 0 : stats.failures / stats.calls);
const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

/** A slot's health score: its success share, less up to 30 points for being slower than the other slot. */
export function healthScore(stats: SlotStats, other: SlotStats): number {
  if (stats.calls === 0) return 100;
  let score = 100 * (1 - rate(stats));
  if (stats.p95Ms !== null && other.p95Ms !== null && other.p95Ms > 0 && stats.p95Ms > other.p95Ms) {
    score -= Math.min(30, ((stats.p95Ms / other.p95Ms) - 1) * 20);
  }
  if (stats.breakerOpen > 0) score = Math.min(score, 40);
  return Math.max(0, Math.round(score));
}

/** Judges the canary against the stable slot. */
export function judge(canary: SlotStats, stable: SlotStats, settings: Pick<RolloutSettings, 'minSamples' | 'maxErrorRateDelta' | 'maxP95Ratio' | 'minP95DeltaMs'>): Verdict {
  const reasons: string[] = [];
  if (canary.breakerOpen > 0) reasons.push(`the canary's circuit breaker opened (${canary.breakerOpen} call${canary.breakerOpen === 1 ? '' : 's'} refused)`);
  if (canary.crashes > 0) reasons.push(`the canary's process crashed or was unavailable (${canary.crashes} call${canary.crashes === 1 ? '' : 's'})`);
  const enough = canary.calls >= settings.minSamples;
  if (enough) {
    const stableRate = stable.calls >= settings.minSamples ? rate(stable) : 0;
    const delta = rate(canary) - stableRate;
    if (delta > settings.maxErrorRateDelta) {
      reasons.push(`error rate ${percent(rate(canary))} on the canary vs ${percent(stableRate)} on the stable slot (allowed +${percent(settings.maxErrorRateDelta)})`);
    }
    if (stable.calls >= settings.minSamples && canary.p95Ms !== null && stable.p95Ms !== null) {
      const slower = canary.p95Ms - stable.p95Ms;
      if (canary.p95Ms > stable.p95Ms * settings.maxP95Ratio && slower >= settings.minP95DeltaMs) {
        reasons.push(`p95 latency ${canary.p95Ms.toFixed(0)} ms on the canary vs ${stable.p95Ms.toFixed(0)} ms on the stable slot (allowed ×${settings.maxP95Ratio})`);
      }
    }
  }
  const verdict = reasons.length > 0 ? 'degraded' : enough ? 'healthy' : 'waiting';
  return { verdict, reasons, canaryScore: healthScore(canary, stable), stableScore: healthScore(stable, canary) };
}
