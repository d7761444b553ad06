/**
 * @module selection/bandit
 * Stage 5 (seed 001 §5.5, §6.4): Thompson sampling over Beta posteriors, per context key,
 * reranking what retrieval found rather than replacing it (seed §10.2: "The bandit only
 * reranks the semantically retrieved set").
 *
 * The formula (docs/selection.md, "Bandit"):
 * 1. The pool is the top `poolFactor · k` retrieved tools (default 2k), by relevance.
 * 2. Relevance becomes prior evidence: with r = score / best score in the pool (in [0, 1])
 *    and strength c (default 8), tool i's sample is θ_i ~ Beta(α_i + c·r_i, β_i + c·(1 − r_i)),
 *    where (α_i, β_i) is its posterior from `tool_bandit_stats` (Beta(1, 1) when it has none).
 *    Cold, the order follows retrieval with a little noise; as outcomes accumulate, observed
 *    success moves the ranking towards what worked. Issue #25: the relevance evidence grows
 *    with the arm's own (c + n pseudo-observations for n observed), so success can reorder
 *    close candidates but never outweighs relevance by more than half its scale.
 * 3. Exploitation: the k − 1 highest θ. Exploration (one slot, when the pool is larger than
 *    k): among the rest of the pool, the highest draw from the tool's own posterior
 *    Beta(α_i, β_i), relevance left out, so untried tools (Beta(1, 1)) get their chance.
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
  const scored = pool.map((candidate) => {
    const arm = options.arm(candidate.id) ?? UNIFORM_PRIOR;
    const relevance = best > 0 ? Math.max(0, Math.min(1, candidate.score / best)) : 1;
    // Issue #25: relevance keeps at least half the evidence. An organisation's context pools
    // every request, and calls nearly always succeed, so an arm's count says how often a tool
    // was called, whatever was asked; at a fixed c that count soon outweighed relevance and
    // pulled often-called (or, under noisy feedback, wrongly credited) tools over the right
    // one. With c + n pseudo-observations (n: the arm's own), observed success moves a tool by
    // at most half the relevance scale; plain Thompson (c = 0) is unchanged.
    const evidence = strength > 0 ? strength + Math.max(0, safeShape(arm.alpha) + safeShape(arm.beta) - 2) : 0;
    const sample = options.sampler.beta(safeShape(arm.alpha) + evidence * relevance, safeShape(arm.beta) + evidence * (1 - relevance));
    return { candidate, arm, sample };
  });
  const order = [...scored].sort((a, b) => b.sample - a.sample);
  const explore = (options.exploration ?? true) && pool.length > k && k >= 2;
  if (!explore) return order.slice(0, k).map(({ candidate, sample }) => ({ id: candidate.id, score: candidate.score, sample, reason: 'retrieved' }));
  const exploit = order.slice(0, k - 1);
  let pick: (typeof scored)[number] | undefined;
  let pickSample = -1;
  for (const entry of order.slice(k - 1)) {
    const draw = options.sampler.beta(safeShape(entry.arm.alpha), safeShape(entry.arm.beta));
    if (draw > pickSample) {
      pickSample = draw;
      pick = entry;
    }
  }
  const picks: BanditPick[] = exploit.map(({ candidate, sample }) => ({ id: candidate.id, score: candidate.score, sample, reason: 'retrieved' }));
  if (pick) picks.push({ id: pick.candidate.id, score: pick.candidate.score, sample: pickSample, reason: 'exploration' });
  return picks;
}
