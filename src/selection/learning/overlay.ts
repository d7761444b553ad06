/**
 * @module selection/learning/overlay
 * One organisation scope's learned examples as a ranking overlay (issue #13). The shared
 * retrieval index serves every tenant, so a tenant's examples cannot be written into its
 * example field; instead each scope holds, per tool, the vectors of its learned examples and
 * their Tool2Vec mean (seed 001 §5.4), and a request's boost for a tool is added to the shared
 * index's score at query time. The similarity is absolute (cosine), not normalised by the best
 * hit, so a scope whose examples are all unrelated to a request changes nothing.
 */
import { dot, meanVector } from '../../retrieval/embedders/embedder.ts';

/** One learned example, embedded. */
export interface OverlayExample {
  id: string;
  toolId: string;
  contributor: string;
  vector: Float32Array;
}

interface ToolEntry {
  vectors: Float32Array[];
  mean: Float32Array;
  contributors: number;
}

/** The overlay's ranking constants (from LearningSettings). */
export interface OverlayScoring {
  minSimilarity: number;
  weight: number;
  contributorShare: number;
}

/** A scope's learned examples, ready to score. Immutable: a change builds a new one. */
export interface ScopeOverlay {
  readonly size: number;
  readonly toolCount: number;
  /** Boost per tool (0…weight, as a multiple of the request's best base score), only tools above the similarity floor. */
  boosts(query: Float32Array, candidateIds?: ReadonlySet<string>): Map<string, number>;
}

/**
 * A tool's similarity to a request: the mean of the nearest example's cosine (a repeat of a
 * known request) and the Tool2Vec mean's cosine (the tool's learned region). Its boost rises
 * linearly from 0 at `minSimilarity` to `weight` at 1, scaled by how many distinct
 * contributors taught the tool (min(1, contributors × share)).
 */
function boostOf(entry: ToolEntry, query: Float32Array, scoring: OverlayScoring): number {
  let nearest = 0;
  for (const vector of entry.vectors) nearest = Math.max(nearest, dot(query, vector));
  const similarity = 0.5 * nearest + 0.5 * dot(query, entry.mean);
  if (similarity <= scoring.minSimilarity) return 0;
  const strength = Math.min(1, (similarity - scoring.minSimilarity) / (1 - scoring.minSimilarity));
  const spread = Math.min(1, entry.contributors * scoring.contributorShare);
  return scoring.weight * strength * spread;
}

/** Builds a scope's overlay from its embedded examples. */
export function buildOverlay(examples: readonly OverlayExample[], dimensions: number, scoring: OverlayScoring): ScopeOverlay {
  const grouped = new Map<string, OverlayExample[]>();
  for (const example of examples) {
    const list = grouped.get(example.toolId) ?? [];
    list.push(example);
    grouped.set(example.toolId, list);
  }
  const tools = new Map<string, ToolEntry>();
  for (const [toolId, list] of grouped) {
    const vectors = list.map((example) => example.vector);
    tools.set(toolId, { vectors, mean: meanVector(vectors, dimensions), contributors: new Set(list.map((example) => example.contributor)).size });
  }
  return {
    size: examples.length,
    toolCount: tools.size,
    boosts(query, candidateIds) {
      const out = new Map<string, number>();
      for (const [toolId, entry] of tools) {
        if (candidateIds && !candidateIds.has(toolId)) continue;
        const boost = boostOf(entry, query, scoring);
        if (boost > 0) out.set(toolId, boost);
      }
      return out;
    },
  };
}

/** An overlay with nothing in it. */
export const emptyOverlay: ScopeOverlay = { size: 0, toolCount: 0, boosts: () => new Map() };
