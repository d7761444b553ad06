/**
 * @module trust/dynamic
 * The runtime trust score of a plugin (seed 000 §4.3), 0–100, from its behaviour over a window:
 * error rate, latency variance, denied egress and user reports. Pure: the service reads the
 * numbers and stores the result. Resource spikes are not measured per call here (cgroup
 * out-of-memory kills show up as failed calls and count through the error rate).
 *
 * score = 100 − 60·failureRate − 15·clamp((cv − 1) / 2) − min(20, 5·denied) − min(30, 10·reports)
 * where cv is the coefficient of variation of call latency. Error rate and variance count only
 * with at least `minCalls` calls in the window (a few unlucky calls say little).
 */

export interface RuntimeSignals {
  calls: number;
  failures: number;
  meanLatencyMs: number;
  stddevLatencyMs: number;
  deniedEgress: number;
  userReports: number;
}

export interface RuntimeScore {
  score: number;
  factors: {
    calls: number;
    failureRate: number | null;
    latencyCv: number | null;
    deniedEgress: number;
    userReports: number;
    penalties: { failures: number; latency: number; egress: number; reports: number };
  };
}

const clamp01 = (value: number) => Math.min(1, Math.max(0, value));

/** Computes the runtime trust score from one plugin's signals. */
export function runtimeTrustScore(signals: RuntimeSignals, minCalls: number): RuntimeScore {
  const enough = signals.calls >= minCalls && signals.calls > 0;
  const failureRate = enough ? signals.failures / signals.calls : null;
  const latencyCv = enough && signals.meanLatencyMs > 0 ? signals.stddevLatencyMs / signals.meanLatencyMs : null;
  const penalties = {
    failures: failureRate === null ? 0 : 60 * failureRate,
    latency: latencyCv === null ? 0 : 15 * clamp01((latencyCv - 1) / 2),
    egress: Math.min(20, 5 * signals.deniedEgress),
    reports: Math.min(30, 10 * signals.userReports),
  };
  const score = Math.round(Math.max(0, 100 - penalties.failures - penalties.latency - penalties.egress - penalties.reports));
  const round = (value: number) => Math.round(value * 1000) / 1000;
  return {
    score,
    factors: {
      calls: signals.calls,
      failureRate: failureRate === null ? null : round(failureRate),
      latencyCv: latencyCv === null ? null : round(latencyCv),
      deniedEgress: signals.deniedEgress,
      userReports: signals.userReports,
      penalties: { failures: round(penalties.failures), latency: round(penalties.latency), egress: penalties.egress, reports: penalties.reports },
    },
  };
}
