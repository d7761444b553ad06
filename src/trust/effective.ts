/**
 * @module trust/effective
 * The trust a plugin starts with (issue #10), as one pure function: the verified level (the
 * last verdict, or the configured default before any), then an admin's grant (sets the level)
 * or cap (limits it), then dynamic trust (seed 000 §4.3): a runtime score below the threshold
 * lowers the result by one level. Dynamic trust only ever lowers, and it applies to granted
 * levels too: an explicit grant is not a licence to misbehave.
 *
 * Issue #23: nothing automatic goes above `automaticTrustCeiling` (COMMUNITY) — neither a
 * verdict (even one stored before the ceiling existed) nor the configured default — and an
 * admin's grant above it holds only while the source is pinned (trust/source-pin.ts): a grant
 * on a source that is no longer pinned (reinstalled from a folder) counts as COMMUNITY.
 */
import { automaticTrustCeiling } from '../runtime/isolation-policy.ts';
import type { TrustLevel } from '../runtime/types.ts';

/** The levels from least to most trusted (seed 000 §4.1). */
export const trustLevels: readonly TrustLevel[] = ['UNVERIFIED', 'COMMUNITY', 'ENTERPRISE', 'VERIFIED_PUBLISHER', 'OFFICIAL'];

/** Position of a level in `trustLevels` (0 = UNVERIFIED). */
export function levelRank(level: TrustLevel): number {
  return trustLevels.indexOf(level);
}

/** The less trusted of two levels. */
export function lowerOf(a: TrustLevel, b: TrustLevel): TrustLevel {
  return levelRank(a) <= levelRank(b) ? a : b;
}

/** One level less trusted (UNVERIFIED stays UNVERIFIED). */
export function oneLevelDown(level: TrustLevel): TrustLevel {
  return trustLevels[Math.max(0, levelRank(level) - 1)]!;
}

export interface TrustInputs {
  /** The last verdict's level; null before any verification. */
  verifiedLevel: TrustLevel | null;
  /** The level of plugins never verified (configuration). */
  defaultLevel: TrustLevel;
  /** The admin's grant or cap in force, if any. */
  grant?: { kind: 'grant' | 'cap'; level: TrustLevel } | undefined;
  /** The latest runtime trust, if computed. */
  runtime?: { score: number; belowThreshold: boolean } | undefined;
  /** Whether the installed source is pinned; a grant above the ceiling needs it (absent: not pinned). */
  source?: { pinned: boolean; description: string } | undefined;
}

export interface EffectiveTrust {
  level: TrustLevel;
  /** How the level came about, one step per entry (shown by `plugin trust` and the API). */
  steps: string[];
}

/** Combines verdict, grant or cap, and dynamic trust into the level a plugin starts with. */
export function effectiveTrust(inputs: TrustInputs): EffectiveTrust {
  const automatic = inputs.verifiedLevel ?? inputs.defaultLevel;
  let level = lowerOf(automatic, automaticTrustCeiling);
  const steps = [inputs.verifiedLevel === null ? `not verified: default ${automatic}` : `verified: ${automatic}`];
  if (level !== automatic) steps.push(`automatic trust stops at ${level}`);
  if (inputs.grant?.kind === 'grant') {
    const granted = inputs.grant.level;
    if (levelRank(granted) > levelRank(automaticTrustCeiling) && inputs.source?.pinned !== true) {
      level = automaticTrustCeiling;
      steps.push(`admin grant ${granted} not applied: ${inputs.source?.description ?? 'the source is not pinned'}; ${level}`);
    } else {
      level = granted;
      steps.push(`admin grant: ${level}`);
    }
  } else if (inputs.grant?.kind === 'cap') {
    const capped = lowerOf(level, inputs.grant.level);
    steps.push(capped === level ? `admin cap ${inputs.grant.level}: no change` : `admin cap: ${capped}`);
    level = capped;
  }
  if (inputs.runtime?.belowThreshold) {
    level = oneLevelDown(level);
    steps.push(`runtime trust ${inputs.runtime.score} below threshold: ${level}`);
  }
  return { level, steps };
}

/**
 * The ranking factor of a plugin from everything known about its trust: its level before
 * dynamic trust (a plugin neither verified nor granted is unknown, not known to be bad: no
 * level penalty), then the runtime penalty when its runtime trust is below the threshold.
 */
export function trustRankingFactor(inputs: TrustInputs, settings: { fullFrom: TrustLevel; step: number; runtimePenalty: number }): number {
  const unknown = inputs.verifiedLevel === null && inputs.grant === undefined;
  const level = unknown ? settings.fullFrom : effectiveTrust({ ...inputs, runtime: undefined }).level;
  return rankingFactor(level, inputs.runtime?.belowThreshold ?? false, settings);
}

/**
 * The ranking factor of a plugin's tools (≤ 1, never raising): 1 at or above `fullFrom`, then
 * `step` less per level below it, and a further `runtimePenalty` when its runtime trust is below
 * the threshold.
 */
export function rankingFactor(level: TrustLevel, belowThreshold: boolean, settings: { fullFrom: TrustLevel; step: number; runtimePenalty: number }): number {
  const missing = Math.max(0, levelRank(settings.fullFrom) - levelRank(level));
  const factor = (1 - settings.step * missing) * (belowThreshold ? 1 - settings.runtimePenalty : 1);
  return Math.min(1, Math.max(0.05, factor));
}
