/**
 * @module selection/bandit
 * Stage 5 (seed 001 §5.5, §6.4): Thompson sampling over Beta posteriors, per context key,
 * reranking what retrieval found rather than replacing it (seed §10.2: "The bandit only
 * reranks the semantically retrieved set").
 *
 * The formula (docs/selection.md, "Bandit"):
 * 1. The pool is the top `poolFactor · k` retrieved tools (default 2k), by relevance.
 * 2. Relevance is the prior: with r = score / best score in the pool (in [0, 1]), strength c
 *    (default 8) and a tool's posterior (α_i, β_i) from `tool_bandit_stats` (Beta(1, 1) when
 *    it has none; n = α_i + β_i − 2 observed outcomes), the tool is ranked by
 *    θ_i = r_i + w_n · (p_i − m_i), w_n = 2(n + 2) / (c + 2n + 2) (0.4 untried, → 1),
 *    where m_i is the success rate of the pool's *other* arms (pooled, with 2 pseudo-outcomes
 *    at the context's own rate over its other arms, `context`; ½ without it) and
 *    p_i ~ Beta(α_i − 1 + 2m_i, β_i − 1 + 2(1 − m_i)) is a draw of the tool's own rate,
 *    shrunk towards m_i; an untried tool has p_i = m_i. Issue #25, two changes measured on the
 *    learning replay (docs/retrieval.md): only the arm's own evidence is drawn, so a tool with
 *    none ranks by relevance alone and the draw narrows as evidence grows (drawing the relevance
 *    prior as well, Beta(α + c·r, β + c·(1 − r)), reordered cold, close candidates at random);
 *    and a tool is measured against the other tools of its pool, not against ½: calls nearly
 *    always succeed, so an often-called tool looked better than any untried one and was pulled
 *    over more relevant ones (the bandit alone ranked below static under noisy feedback). A
 *    tool that succeeds where the others fail still rises, by up to w_n · (1 − m_i).
 *    With c = 0 (plain Thompson sampling) θ_i ~ Beta(α_i, β_i), as before.
 * 3. Exploitation: the k − 1 highest θ. Exploration (one slot, when the pool is larger than
 *    k): among the rest of the pool, the highest draw from Beta(1 + c·r_i, β_i + c·(1 − r_i)):
 *    relevance and the tool's failures, not its successes (a tool known to work needs no
 *    exploring, and an often-called tool used to win the slot from untried ones); with c = 0,
 *    Beta(1, β_i), so untried tools still get their chance before known failures.
 */
import type { Sampler } from './sampler.ts';

/** Beta posterior parameters of one tool in one context. */
export interface BanditArm {
  alpha: number;
  beta: number;
}

/** The uninformative prior (seed 001 §6.4). */
export const UNIFORM_PRIOR: BanditArm = Object.freeze({ alpha: 1, beta: 1 });

/** A retrieved tool: id and relevance score (higher is better). */
export interface RankedCandidate {
  id: string;
  score: number;
}

/** A tool chosen by the bandit. */
export interface BanditPick {
  id: string;
  /** The retrieval score it came with. */
  score: number;
  /** The Thompson sample it was ranked by. */
  sample: number;
  reason: 'retrieved' | 'exploration';
}

/** Options of `thompsonRerank`. */
export interface ThompsonOptions {
  k: number;
  sampler: Sampler;
  /** Posterior of a tool in this context (undefined → the uniform prior). */
  arm: (id: string) => BanditArm | undefined;
  /** Pool size as a multiple of k (default 2). */
  poolFactor?: number;
  /** Pseudo-observations contributed by relevance (default 8). */
  relevanceStrength?: number;
  /** Reserve one slot for exploration (default true). */
  exploration?: boolean;
  /**
   * Outcomes of every arm of the context, summed (successes = Σ(α − 1), failures = Σ(β − 1)):
   * the prior mean of the pool's rate. Without it the prior is ½.
   */
  context?: { successes: number; failures: number };
}

/** The outcomes one arm adds to its context's total (successes α − 1, failures β − 1, never below 0). */
export function armOutcomes(arm: BanditArm): { successes: number; failures: number } {
  return { successes: Math.max(0, safeShape(arm.alpha) - 1), failures: Math.max(0, safeShape(arm.beta) - 1) };
}

/**
 * Successes and failures over every arm of a context (the `context` option of `thompsonRerank`).
 * A sum over the whole context: the engine keeps it as a running total instead
 * (engine/bandit-arms.ts), so a selection does not walk every arm.
 */
export function contextOutcomes(arms: Iterable<BanditArm>): { successes: number; failures: number } {
  let successes = 0;
  let failures = 0;
  for (const arm of arms) {
    const own = armOutcomes(arm);
    successes += own.successes;
    failures += own.failures;
  }
  return { successes, failures };
}

/**
 * Context key of seed 001 §5.5, `${tier}:${page}:general` (`any` stands for an absent tier or
 * page), with the organisation appended as `:org=<id>` (issue #13: one tenant's outcomes never
 * move another's ranking). The id is URI-encoded, so it holds no ':' and the last segment
 * names the organisation unambiguously whatever the page says. A request without an
 * organisation keeps the seed's key exactly, so arms stored before the organisation joined
 * the key stay readable as the organisation-less context (they were learned from every
 * organisation's traffic, so no organisation inherits them).
 */
export function banditContextKey(context: { orgId?: string | null | undefined; tier?: string | null | undefined; page?: string | null | undefined }): string {
  const part = (value: string | null | undefined) => (value === undefined || value === null || value === '' ? 'any' : value);
  const key = `${part(context.tier)}:${part(context.page)}:general`;
  return context.orgId === undefined || context.orgId === null || context.orgId === '' ? key : `${key}:org=${encodeURIComponent(context.orgId)}`;
}

function safeShape(value: number): number {
  return Number.isFinite(value) && value > 0 ? value : 1;
}

/** Reranks the retrieved tools (best first) and returns at most k picks. */
export function thompsonRerank(ranked: readonly RankedCandidate[], options: ThompsonOptions): BanditPick[] {
  const k = Math.max(0, Math.floor(options.k));
  if (k === 0 || ranked.length === 0) return [];
  const strength = options.relevanceStrength ?? 8;
  const pool = ranked.slice(0, Math.max(k, Math.ceil(k * (options.poolFactor ?? 2))));
  let best = 0;
  for (const candidate of pool) if (candidate.score > best) best = candidate.score;
  // The pool's success rate (its arms' outcomes pooled, with a Beta(1, 1) prior): what an arm's
  // own rate is measured against, and the prior mean of an arm with few observations. Calls
  // nearly always succeed, so against a fixed ½ every called tool looked better than an untried one.
  let successes = 0;
  let failures = 0;
  for (const candidate of pool) {
    const arm = options.arm(candidate.id) ?? UNIFORM_PRIOR;
    successes += Math.max(0, safeShape(arm.alpha) - 1);
    failures += Math.max(0, safeShape(arm.beta) - 1);
  }
  // Leave-one-out: an arm is measured against the others, or a pool where only it was observed
  // (the others untried) would be measured against itself and never move.
  // The pooled rate's prior mean is the context's own rate (the arm left out as well), not ½:
  // where nearly every call succeeds, an arm that only ever succeeded is average, not better
  // than an untried one (issue #25: noisy credit pulled wrongly called tools up on Seal-Tools).
  const rateWithout = (alpha: number, beta: number) => {
    const ownS = Math.max(0, alpha - 1);
    const ownF = Math.max(0, beta - 1);
    const s = successes - ownS;
    const f = failures - ownF;
    const prior = options.context ? (Math.max(0, options.context.successes - ownS) + 1) / (Math.max(0, options.context.successes - ownS) + Math.max(0, options.context.failures - ownF) + 2) : 0.5;
    return (s + 2 * prior) / (s + f + 2);
  };
  const scored = pool.map((candidate) => {
    const arm = options.arm(candidate.id) ?? UNIFORM_PRIOR;
    const relevance = best > 0 ? Math.max(0, Math.min(1, candidate.score / best)) : 1;
    const alpha = safeShape(arm.alpha);
    const beta = safeShape(arm.beta);
    const observed = Math.max(0, alpha + beta - 2);
    // Issue #25: only the arm's own posterior is drawn (relevance is a measured score, not an
    // uncertain rate), and against the pool's other arms: an organisation's context pools every
    // request and calls nearly always succeed, so a raw rate said how often a tool was called.
    let sample: number;
    if (strength > 0) {
      const poolRate = rateWithout(alpha, beta);
      const own = observed > 0 ? options.sampler.beta(Math.max(0, alpha - 1) + 2 * poolRate, Math.max(0, beta - 1) + 2 * (1 - poolRate)) : poolRate;
      sample = relevance + ((2 * (observed + 2)) / (strength + 2 * observed + 2)) * (own - poolRate);
    } else sample = options.sampler.beta(alpha, beta);
    return { candidate, arm, sample, relevance };
  });
  const order = [...scored].sort((a, b) => b.sample - a.sample);
  const explore = (options.exploration ?? true) && pool.length > k && k >= 2;
  if (!explore) return order.slice(0, k).map(({ candidate, sample }) => ({ id: candidate.id, score: candidate.score, sample, reason: 'retrieved' }));
  const exploit = order.slice(0, k - 1);
  let pick: (typeof scored)[number] | undefined;
  let pickSample = -1;
  for (const entry of order.slice(k - 1)) {
    const draw = options.sampler.beta(1 + strength * entry.relevance, safeShape(entry.arm.beta) + strength * (1 - entry.relevance));
    if (draw > pickSample) {
      pickSample = draw;
      pick = entry;
    }
  }
  const picks: BanditPick[] = exploit.map(({ candidate, sample }) => ({ id: candidate.id, score: candidate.score, sample, reason: 'retrieved' }));
  if (pick) picks.push({ id: pick.candidate.id, score: pick.candidate.score, sample: pickSample, reason: 'exploration' });
  return picks;
}
