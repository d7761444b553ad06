/**
 * @module selection/bandit-convergence
 * Seed 001 §7.4's claim, measured: "after approximately 50 interactions per context, the
 * Thompson Sampling selection converges to within 5 % of the oracle policy". One context has
 * `tools` arms with known success rates (one best at 0.85, the rest uniform in [0.2, 0.75]);
 * each interaction the bandit (thompsonRerank, as the engine runs it) offers k tools, the model
 * calls the first, and only that arm learns, as in the outcome path (engine/outcomes.ts).
 *
 * The measure is the policy's expected success at interaction t, averaged over independent
 * runs, against the oracle's (the best rate among the 2k tools the bandit reranks, since
 * neither can pick a tool retrieval did not find): the first t from which the average stays at or
 * above 95 % of the oracle. Averaging across runs, not over a trailing window of one run, keeps
 * the number free of the window's lag (the bench's 20-interaction window adds about ten).
 */
import { contextOutcomes, thompsonRerank, type BanditArm } from './bandit.ts';
import { createSeededRandom } from './random.ts';
import { createSampler } from './sampler.ts';

/** Settings of one convergence measurement. */
export interface ConvergenceOptions {
  tools?: number;
  k?: number;
  interactions?: number;
  runs?: number;
  seed?: number;
  /** Relevance prior strength c of thompsonRerank (0: plain Thompson sampling, the seed's setting). */
  relevanceStrength?: number;
  /** Retrieval scores: equal (retrieval cannot tell the tools apart) or random (unrelated to success). */
  relevance?: 'equal' | 'random';
}

/** What was measured. */
export interface ConvergenceResult {
  /** First interaction from which the run-averaged expected success stays ≥ 95 % of the oracle (null: never). */
  interactionsToWithin5Percent: number | null;
  /** Run-averaged expected success ÷ oracle at interactions 10, 50, 100 and the last. */
  ratioAt: Record<string, number>;
  /** Share of runs whose chosen tool at that interaction is within 5 % of the oracle. */
  withinAt: Record<string, number>;
}

/** Measures convergence by simulation (deterministic for a seed). */
export function measureConvergence(options: ConvergenceOptions = {}): ConvergenceResult {
  const tools = options.tools ?? 10;
  const k = options.k ?? 3;
  const interactions = options.interactions ?? 300;
  const runs = options.runs ?? 400;
  const random = createSeededRandom(options.seed ?? 7);
  const sampler = createSampler(random);
  // ratio[t]: sum over runs of (chosen tool's rate ÷ oracle rate) at interaction t + 1.
  const ratio = new Float64Array(interactions);
  // within[t]: runs whose chosen tool at t + 1 is within 5 % of the oracle.
  const within = new Float64Array(interactions);
  for (let run = 0; run < runs; run++) {
    const rates = Array.from({ length: tools }, () => 0.2 + 0.55 * random());
    rates[Math.floor(random() * tools)] = 0.85;
    const ranked = rates.map((_, tool) => ({ id: String(tool), score: options.relevance === 'random' ? 0.5 + 0.5 * random() : 1 })).sort((a, b) => b.score - a.score);
    // The oracle knows the rates but, like the bandit, picks among what retrieval found: the pool of 2k.
    const best = Math.max(...ranked.slice(0, 2 * k).map((candidate) => rates[Number(candidate.id)]!));
    const arms = new Map<string, BanditArm>();
    for (let t = 0; t < interactions; t++) {
      const picks = thompsonRerank(ranked, { k, sampler, arm: (id) => arms.get(id), context: contextOutcomes(arms.values()), relevanceStrength: options.relevanceStrength ?? 0 });
      const chosen = picks[0]!.id;
      const success = random() < rates[Number(chosen)]!;
      const arm = arms.get(chosen) ?? { alpha: 1, beta: 1 };
      arms.set(chosen, { alpha: arm.alpha + (success ? 1 : 0), beta: arm.beta + (success ? 0 : 1) });
      ratio[t]! += rates[Number(chosen)]! / best;
      if (rates[Number(chosen)]! >= 0.95 * best) within[t]! += 1;
    }
  }
  const mean = Array.from(ratio, (sum) => sum / runs);
  let from: number | null = null;
  for (let t = interactions - 1; t >= 0 && mean[t]! >= 0.95; t--) from = t + 1;
  const checkpoints = [10, 50, 100, interactions].filter((t) => t <= interactions);
  const table = (values: (t: number) => number) => Object.fromEntries(checkpoints.map((t) => [String(t), Number(values(t).toFixed(4))]));
  return {
    interactionsToWithin5Percent: from,
    ratioAt: table((t) => mean[t - 1]!),
    withinAt: table((t) => within[t - 1]! / runs),
  };
}
