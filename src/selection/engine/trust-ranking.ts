/**
 * @module selection/engine/trust-ranking
 * Trust in the ranking (issue #10): a tool's retrieval score is multiplied by its plugin's trust
 * factor (≤ 1, from the trust service) before the bandit rerank, then the list is re-sorted
 * (stable). A factor can only lower a tool, never raise it: values above 1, non-finite or
 * negative ones are clamped into [0, 1].
 */
import type { RankedCandidate } from '../bandit.ts';

/** Re-scores `ranked` by the trust factor of each tool's plugin; unknown tools keep factor 1. */
export function applyTrustFactors(ranked: readonly RankedCandidate[], pluginOf: (toolId: string) => string | undefined, factorOf: (pluginId: string) => number): RankedCandidate[] {
  const scored = ranked.map((hit, index) => {
    const pluginId = pluginOf(hit.id);
    const raw = pluginId === undefined ? 1 : factorOf(pluginId);
    const factor = Number.isFinite(raw) ? Math.min(1, Math.max(0, raw)) : 1;
    return { hit: factor === 1 ? hit : { ...hit, score: hit.score * factor }, index };
  });
  scored.sort((a, b) => b.hit.score - a.hit.score || a.index - b.index);
  return scored.map((entry) => entry.hit);
}
