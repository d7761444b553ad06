/**
 * @module trust/dynamic
 * The runtime trust score of a plugin (seed 000 §4.3), 0–100, from its behaviour over a window:
 * error rate (crashes fail the call in flight and count here), latency variance, denied egress
 * and user reports. Pure: the service reads the numbers and stores the result.
 *
 * score = 100 − 60·failureRate − 15·clamp((cv − 1) / 2) − egress − min(45, 15·reports)
 * egress = (internalTargets > 0 ? min(75, 55 + 10·(internalTargets − 1)) : 0) + min(25, 5·otherDenied)
 *
 * The rule (issue #23): reaching for the inside — loopback, private or link-local addresses,
 * the cloud metadata address, `localhost` and local names, the hub's own ports — is never an
 * accident for a plugin whose allow-list does not name it, so the first such denied attempt costs
 * 55 points and alone takes a plugin from 100 below the default threshold of 50: it is
 * re-sandboxed at once. Each further internal target costs 10 more. A denied public host is
 * more often a missing rule than an attack: 5 each, at most 25. Three user reports cost 45.
 * Error rate and variance count only with at least `minCalls` calls in the window.
 */

export interface RuntimeSignals {
  calls: number;
  failures: number;
  meanLatencyMs: number;
  stddevLatencyMs: number;
  /** Denied egress decisions in the window (all targets). */
  deniedEgress: number;
  /** Distinct internal targets (host:port) among the denied decisions. */
  deniedInternalTargets?: number;
  /** Denied decisions for targets that are not internal (default: all of `deniedEgress`). */
  deniedOther?: number;
  userReports: number;
}

export interface RuntimeScore {
  score: number;
  factors: {
    calls: number;
    failureRate: number | null;
    latencyCv: number | null;
    deniedEgress: number;
    deniedInternalTargets: number;
    userReports: number;
    penalties: { failures: number; latency: number; egress: number; reports: number };
  };
}

/** What one signal costs (the rule in the module comment). */
export const runtimePenalties = {
  firstInternalTarget: 55,
  furtherInternalTarget: 10,
  internalCap: 75,
  otherDenied: 5,
  otherDeniedCap: 25,
  report: 15,
  reportCap: 45,
} as const;

const clamp01 = (value: number) => Math.min(1, Math.max(0, value));

/** The egress penalty: internal targets weigh heavily, other denials lightly. */
export function egressPenalty(deniedOther: number, deniedInternalTargets: number): number {
  const p = runtimePenalties;
  const internal = deniedInternalTargets > 0 ? Math.min(p.internalCap, p.firstInternalTarget + p.furtherInternalTarget * (deniedInternalTargets - 1)) : 0;
  return internal + Math.min(p.otherDeniedCap, p.otherDenied * deniedOther);
}

/** Computes the runtime trust score from one plugin's signals. */
export function runtimeTrustScore(signals: RuntimeSignals, minCalls: number): RuntimeScore {
  const enough = signals.calls >= minCalls && signals.calls > 0;
  const failureRate = enough ? signals.failures / signals.calls : null;
  const latencyCv = enough && signals.meanLatencyMs > 0 ? signals.stddevLatencyMs / signals.meanLatencyMs : null;
  const internalTargets = signals.deniedInternalTargets ?? 0;
  const penalties = {
    failures: failureRate === null ? 0 : 60 * failureRate,
    latency: latencyCv === null ? 0 : 15 * clamp01((latencyCv - 1) / 2),
    egress: egressPenalty(signals.deniedOther ?? signals.deniedEgress, internalTargets),
    reports: Math.min(runtimePenalties.reportCap, runtimePenalties.report * signals.userReports),
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
      deniedInternalTargets: internalTargets,
      userReports: signals.userReports,
      penalties: { failures: round(penalties.failures), latency: round(penalties.latency), egress: penalties.egress, reports: penalties.reports },
    },
  };
}
