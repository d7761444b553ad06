/**
 * @module verification/verdict
 * The seventh stage (seed 000 §4.2 "Verdict Generation"): the weighted score of the five scored
 * stages, a grade, the trust level of that score (seed 000 §4.1 bands, `trustLevelForScore`)
 * lowered to the strictest `cap` any stage set, and the execution mode of that level.
 *
 * Grades (chosen here; the seed only shows 87 → "A"): A 85–100, B 70–84, C 55–69, D 40–54,
 * F 0–39, so F coincides with UNVERIFIED. A stage that did not run scores 0 and is weighted
 * like any other, and a stage that did not complete (not run, errored, timed out) caps the
 * level at UNVERIFIED: what it checks was never observed, so no isolation is relaxed for it.
 *
 * Issue #23: a verdict never gives more than `automaticTrustCeiling` (COMMUNITY: sandboxed,
 * egress allow-list). The score's own band stays in `scoreLevel` for the report; the levels
 * that loosen isolation (ENTERPRISE and above) come only from an admin's recorded grant on a
 * pinned source (trust/grant-rules.ts). What a plugin does only later, on a trigger it never
 * saw here (dormant behaviour), no verdict can see.
 *
 * `approved` means the verdict lifts the plugin above UNVERIFIED (it may reach the network
 * through its allow-list); an UNVERIFIED verdict keeps it where every unverified plugin already is.
 */
import { automaticTrustCeiling, trustLevelForScore } from '../runtime/isolation-policy.ts';
import type { TrustLevel } from '../runtime/types.ts';
import { STAGE_WEIGHTS, type StageName, type StageResult } from './types.ts';

/** Trust levels from least to most trusted. */
export const TRUST_ORDER: readonly TrustLevel[] = ['UNVERIFIED', 'COMMUNITY', 'ENTERPRISE', 'VERIFIED_PUBLISHER', 'OFFICIAL'];

/** How Quiver runs a plugin of each level here (DESIGN §3.6 "isolation here"; the seed's at-scale names differ). */
export const EXECUTION_MODES: Readonly<Record<TrustLevel, string>> = {
  UNVERIFIED: 'sandbox_no_network',
  COMMUNITY: 'sandbox_egress_allowlist',
  ENTERPRISE: 'sandbox_granted_egress',
  VERIFIED_PUBLISHER: 'sandbox_host_network',
  OFFICIAL: 'sandbox_host_network_no_limits',
};

/** Lower bounds of the grades, best first. */
export const GRADE_BANDS: ReadonlyArray<{ grade: string; min: number }> = [
  { grade: 'A', min: 85 },
  { grade: 'B', min: 70 },
  { grade: 'C', min: 55 },
  { grade: 'D', min: 40 },
  { grade: 'F', min: 0 },
];

/** The verdict of one verification. */
export interface Verdict {
  overallScore: number;
  grade: string;
  trustLevel: TrustLevel;
  /** The seed's band of the score alone (informational: a verdict never goes above `automaticTrustCeiling`). */
  scoreLevel: TrustLevel;
  executionMode: string;
  approved: boolean;
  /** Every cap a stage set, strictest first; the first one decided the level when it is lower than the score's. */
  caps: Array<{ stage: StageName; level: TrustLevel; reason: string }>;
}

/** The grade of a score. */
export function gradeForScore(score: number): string {
  return GRADE_BANDS.find((band) => score >= band.min)?.grade ?? 'F';
}

/** The less trusted of two levels. */
export function lowerTrust(a: TrustLevel, b: TrustLevel): TrustLevel {
  return TRUST_ORDER.indexOf(a) <= TRUST_ORDER.indexOf(b) ? a : b;
}

/** Seed 000 §4.2: score = 0.20·static + 0.15·schema + 0.25·sandbox + 0.25·security + 0.15·compatibility, rounded. */
export function weightedScore(scores: Partial<Record<StageName, number>>): number {
  let total = 0;
  for (const [stage, weight] of Object.entries(STAGE_WEIGHTS) as Array<[keyof typeof STAGE_WEIGHTS, number]>) {
    total += weight * (scores[stage] ?? 0);
  }
  return Math.max(0, Math.min(100, Math.round(total)));
}

/** A stage's result as the verdict reads it; `status` other than `passed` means it did not complete. */
export type VerdictInput = Pick<StageResult, 'score' | 'cap'> & { status?: string };

/** The cap of a stage: its own, or UNVERIFIED when it did not complete (what it checks was never observed: fail closed). */
function capOf(stage: StageName, result: VerdictInput): Verdict['caps'][number] | undefined {
  if (result.status !== undefined && result.status !== 'passed') {
    return { stage, level: 'UNVERIFIED', reason: `the ${stage} stage did not complete (${result.status})` };
  }
  return result.cap === undefined ? undefined : { stage, level: result.cap.level, reason: result.cap.reason };
}

/** The verdict of the stage results (a missing stage counts as 0). */
export function computeVerdict(results: Partial<Record<StageName, VerdictInput>>): Verdict {
  const overallScore = weightedScore(Object.fromEntries(Object.entries(results).map(([stage, result]) => [stage, result?.score ?? 0])));
  const scoreLevel = trustLevelForScore(overallScore);
  const caps = (Object.entries(results) as Array<[StageName, VerdictInput | undefined]>)
    .map(([stage, result]) => (result === undefined ? undefined : capOf(stage, result)))
    .filter((cap): cap is Verdict['caps'][number] => cap !== undefined)
    .sort((a, b) => TRUST_ORDER.indexOf(a.level) - TRUST_ORDER.indexOf(b.level));
  // A score is necessary, never sufficient, to loosen isolation (issue #23).
  const trustLevel = caps.reduce<TrustLevel>((level, cap) => lowerTrust(level, cap.level), lowerTrust(scoreLevel, automaticTrustCeiling));
  return {
    overallScore,
    grade: gradeForScore(overallScore),
    trustLevel,
    scoreLevel,
    executionMode: EXECUTION_MODES[trustLevel],
    approved: trustLevel !== 'UNVERIFIED',
    caps,
  };
}
