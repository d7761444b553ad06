/**
 * @module selection/replay/simulated-outcome
 * The model `quiver eval --replay` simulates (issue #13): it calls the gold tool when a
 * selection offered it in the top K, otherwise nothing; with feedback noise P, a share P of
 * interactions instead credits one wrong offered tool (a successful call of a tool that was
 * not gold), the way a real model sometimes picks a plausible neighbour and it "works".
 */
import type { RandomSource } from '../random.ts';

/** What the simulated model did with one selection. */
export interface SimulatedOutcome {
  /** Offered tool ids it called (bench ids), in offered order. */
  called: string[];
  /** True when it called something (simulated calls always succeed). */
  success: boolean;
  /** True when the noise credited a wrong tool. */
  noisy: boolean;
}

/**
 * Decides the outcome of one selection. `offered` is the offered ranking (bench ids, best
 * first; only its first `k` count), `gold` the query's relevant items (each a set of
 * interchangeable ids). One random draw is taken for the noise and, when it fires, one to pick
 * the wrong tool, so a seeded run is reproducible.
 */
export function simulateOutcome(offered: readonly string[], gold: readonly (readonly string[])[], options: { k: number; noise: number; random: RandomSource }): SimulatedOutcome {
  const top = offered.slice(0, Math.max(0, options.k));
  const goldIds = new Set(gold.flat());
  if (options.noise > 0 && options.random() < options.noise) {
    const wrong = top.filter((id) => !goldIds.has(id));
    if (wrong.length > 0) return { called: [wrong[Math.floor(options.random() * wrong.length)]!], success: true, noisy: true };
  }
  // Each gold item offered is called once (its first offered member): a two-tool request calls both.
  const called: string[] = [];
  for (const item of gold) {
    const hit = top.find((id) => item.includes(id));
    if (hit !== undefined && !called.includes(hit)) called.push(hit);
  }
  return { called, success: called.length > 0, noisy: false };
}
