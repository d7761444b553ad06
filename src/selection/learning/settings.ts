/**
 * @module selection/learning/settings
 * The knobs of learned example queries (issue #13) and their defaults. The caps and the share
 * come from `QUIVER_LEARNING_*` (src/config.ts); the ranking constants were set by judgement
 * on the offline embedder and are measured by `quiver bench` (learning section).
 */

/** Resolved learning settings. */
export interface LearningSettings {
  /** Learn from outcomes at all (ranking with already learned examples stays on). */
  enabled: boolean;
  /**
   * Examples kept per tool and organisation. Eviction is by recency: the least recently seen
   * example goes first (a repeat refreshes `last_seen_at`), so the set follows current use.
   */
  perToolCap: number;
  /**
   * Largest share of a tool's examples one contributor (user, else session) may hold, and the
   * share of the full learned boost one contributor can give: a tool's boost is scaled by
   * min(1, distinct contributors × share), so one user's flood weighs at most `share`.
   */
  contributorShare: number;
  /** Examples not seen for this many days are deleted (0: kept until deleted). */
  retentionDays: number;
  /**
   * Cosine below which a learned example says nothing about a request; 'calibrated' (the
   * default, issue #25): computed for the embedder in use from its own distribution of
   * different-tool request pairs on public data (retrieval/calibration.ts).
   */
  minSimilarity: number | 'calibrated';
  /** Full learned boost of the vector similarity, as a multiple of the best base score of the request. */
  weight: number;
  /**
   * How much a learned request counts in its tool's lexical example field (issue #25), relative
   * to an example written in the tool's manifest: the organisation's learned requests are
   * scored by the shared index as if they were in its tools' BM25F example field (0: off).
   */
  lexicalWeight: number;
  /**
   * Weight of a learned example no other contributor agrees with (issue #25); it carries full
   * weight once 1 / share contributors taught similar requests for the same tool, and fades
   * as contributors teach similar requests to other tools. 1 turns the agreement rule off.
   */
  agreementShare: number;
  /** How often a scope's examples are re-read from the database (other replicas' learning). */
  refreshMs: number;
  /** How often expired examples are swept (0: only on demand). */
  sweepIntervalMs: number;
}

/** The defaults (documented in docs/retrieval.md, "Learned example queries"). */
export const defaultLearningSettings: LearningSettings = {
  enabled: true,
  perToolCap: 50,
  contributorShare: 0.34,
  retentionDays: 90,
  minSimilarity: 'calibrated',
  weight: 2,
  lexicalWeight: 1,
  agreementShare: 0.5,
  refreshMs: 60_000,
  sweepIntervalMs: 3_600_000,
};

/** Examples one contributor may hold of one tool: ceil(share × cap), at least 1. */
export function perContributorCap(settings: Pick<LearningSettings, 'perToolCap' | 'contributorShare'>): number {
  return Math.max(1, Math.ceil(settings.contributorShare * settings.perToolCap));
}

/** The scope key of an organisation: its id, or '' for callers without one (their own scope). */
export function orgScopeOf(orgId: string | null | undefined): string {
  return orgId ?? '';
}
