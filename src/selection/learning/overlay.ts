/**
 * @module selection/learning/overlay
 * One organisation scope's learned examples as a ranking overlay (issue #13). The shared
 * retrieval index serves every tenant, so a tenant's examples cannot be written into its
 * example field; instead each scope holds, per tool, the vectors of its learned examples and
 * their Tool2Vec mean (seed 001 §5.4), and a request's boost for a tool is added to the shared
 * index's score at query time. The similarity is absolute (cosine), not normalised by the best
 * hit, so a scope whose examples are all unrelated to a request changes nothing.
 *
 * Issue #25: the scope's requests also form its tools' lexical example field (`field`), which
 * the shared index scores as if the text were in each tool's BM25F example field
 * (retrieval-index/learned-field.ts); in the vector boost every example counts by its
 * agreement weight (agreement.ts), so a request other contributors taught to another tool
 * fades instead of pulling its wrongly credited tool up.
 */
import { dot } from '../../retrieval/embedders/embedder.ts';
import type { LearnedExampleField, LearnedToolText } from '../../retrieval/retrieval-index.ts';
import { functionWords, terms } from '../../retrieval/tokenizer.ts';
import { exampleWeights } from './agreement.ts';

/**
 * Above this many examples a scope scores only tools whose examples share a content word with
 * the request (an inverted index), so a search's cost follows the matching tools, not the scope
 * (10,000 examples at 384 dims are ~4 M multiply-adds per search otherwise). Smaller scopes
 * score every tool, so a neural embedder's paraphrase matches are not cut off there.
 */
export const PREFILTER_ABOVE = 2_000;

/** The content terms of a text (stemmed, function words left out). */
export function contentTerms(text: string): string[] {
  return [...new Set(terms(text).filter((term) => !functionWords.has(term)))];
}

/** One learned example, embedded. */
export interface OverlayExample {
  id: string;
  toolId: string;
  contributor: string;
  vector: Float32Array;
  /** Content terms of its text (`contentTerms`), for the large-scope prefilter. */
  terms: readonly string[];
  /** Every index term of its text (`tokenizer.terms`, with repeats), for the example field; `terms` when absent. */
  fieldTerms?: readonly string[];
}

interface ToolEntry {
  /** Rows [start, end) of the scope's matrix hold this tool's example vectors. */
  start: number;
  end: number;
  mean: Float32Array;
  /** Mean agreement weight of its examples (scales the mean's cosine). */
  weight: number;
  contributors: number;
}

/** The overlay's ranking constants (from LearningSettings). */
export interface OverlayScoring {
  minSimilarity: number;
  weight: number;
  contributorShare: number;
  /** How much a learned request counts in its tool's example field, relative to a written example (issue #25); 0 turns the field off. */
  lexicalWeight: number;
  /** Weight of an example no other contributor agrees with (agreement.ts); 1 turns agreement off. */
  agreementShare: number;
  /** Idf-weighted cosine above which two learned requests count as alike (calibrated). */
  agreementFloor: number;
}

/** A scope's learned examples, ready to score. Immutable: a change builds a new one. */
export interface ScopeOverlay {
  readonly size: number;
  readonly toolCount: number;
  /** The learned requests as the tools' example field, for the shared index to score (absent when off or empty). */
  readonly field?: LearnedExampleField;
  /** Boost per tool (0…weight, as a multiple of the request's best base score), only tools above the similarity floor. */
  boosts(query: { vector: Float32Array; terms: readonly string[] }, candidateIds?: ReadonlySet<string>): Map<string, number>;
}

/** Largest weighted dot product of `query` with rows [start, end) of a row-major matrix. */
function nearestRow(matrix: Float32Array, weights: readonly number[], dimensions: number, start: number, end: number, query: Float32Array): number {
  let best = -1;
  for (let row = start; row < end; row++) {
    const offset = row * dimensions;
    let sum = 0;
    for (let i = 0; i < dimensions; i++) sum += matrix[offset + i]! * query[i]!;
    if (weights[row]! * sum > best) best = weights[row]! * sum;
  }
  return best;
}

/** Weighted mean of vectors, unit length (zero when every weight is 0). */
function weightedMean(vectors: readonly Float32Array[], weights: readonly number[], dimensions: number): Float32Array {
  const mean = new Float32Array(dimensions);
  vectors.forEach((vector, v) => {
    const weight = weights[v]!;
    if (weight > 0) for (let i = 0; i < dimensions; i++) mean[i]! += weight * vector[i]!;
  });
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += mean[i]! * mean[i]!;
  if (norm > 0) for (let i = 0; i < dimensions; i++) mean[i]! /= Math.sqrt(norm);
  return mean;
}

/**
 * A tool's similarity to a request: the mean of the nearest example's cosine (a repeat of a
 * known request) and the Tool2Vec mean's cosine (the tool's learned region), each times the
 * agreement weight of what it comes from. Its boost rises linearly from 0 at `minSimilarity`
 * to `weight` at 1; it is then scaled by how many distinct
 * contributors taught the tool (min(1, contributors × share)).
 */
function boostOf(similarity: number, scoring: OverlayScoring): number {
  if (similarity <= scoring.minSimilarity) return 0;
  const strength = Math.min(1, (similarity - scoring.minSimilarity) / (1 - scoring.minSimilarity));
  return scoring.weight * strength;
}

/** Term → tools whose examples contain it. */
function termPostings(examples: readonly OverlayExample[]): Map<string, Set<string>> {
  const postings = new Map<string, Set<string>>();
  for (const example of examples) {
    for (const term of example.terms) {
      const set = postings.get(term) ?? new Set<string>();
      set.add(example.toolId);
      postings.set(term, set);
    }
  }
  return postings;
}

/**
 * The learned example field: per tool, its examples' term occurrences times `lexicalWeight` ×
 * min(1, distinct contributors × share) (one user's flood weighs at most the share). The
 * agreement weights are not applied here: measured on the public replay they cost the field
 * most of its gain (docs/retrieval.md), since on a catalog with several tools per topic
 * neighbouring tools' correct requests "conflict"; the field's saturation already lets a
 * tool's many agreeing requests outweigh a wrongly credited one.
 */
function learnedField(examples: readonly OverlayExample[], scoring: OverlayScoring): LearnedExampleField | undefined {
  if (scoring.lexicalWeight <= 0) return undefined;
  const grouped = new Map<string, { frequency: Map<string, number>; length: number; contributors: Set<string> }>();
  for (const example of examples) {
    const entry = grouped.get(example.toolId) ?? { frequency: new Map<string, number>(), length: 0, contributors: new Set<string>() };
    const words = example.fieldTerms ?? example.terms;
    for (const term of words) entry.frequency.set(term, (entry.frequency.get(term) ?? 0) + 1);
    entry.length += words.length;
    entry.contributors.add(example.contributor);
    grouped.set(example.toolId, entry);
  }
  const tools = new Map<string, LearnedToolText>();
  for (const [toolId, entry] of grouped) {
    const scale = scoring.lexicalWeight * Math.min(1, entry.contributors.size * scoring.contributorShare);
    for (const [term, count] of entry.frequency) entry.frequency.set(term, count * scale);
    tools.set(toolId, { frequency: entry.frequency, length: entry.length });
  }
  return tools.size > 0 ? { tools } : undefined;
}

/** Builds a scope's overlay: its example vectors in one row-major matrix, grouped by tool. */
export function buildOverlay(examples: readonly OverlayExample[], dimensions: number, scoring: OverlayScoring): ScopeOverlay {
  const weightOf =
    scoring.agreementShare >= 1 ? new Map(examples.map((example) => [example.id, 1])) : exampleWeights(examples, { similarityFloor: scoring.agreementFloor, agreementShare: scoring.agreementShare });
  const field = learnedField(examples, scoring);
  const rowWeights: number[] = [];
  const grouped = new Map<string, OverlayExample[]>();
  for (const example of examples) {
    const list = grouped.get(example.toolId) ?? [];
    list.push(example);
    grouped.set(example.toolId, list);
  }
  // One contiguous matrix: scoring a scope is a linear walk, not a chase through many arrays.
  const matrix = new Float32Array(examples.length * dimensions);
  const tools = new Map<string, ToolEntry>();
  let row = 0;
  for (const [toolId, list] of grouped) {
    const start = row;
    for (const example of list) {
      rowWeights.push(weightOf.get(example.id) ?? 0);
      matrix.set(example.vector, row++ * dimensions);
    }
    const mean = weightedMean(list.map((example) => example.vector), rowWeights.slice(start, row), dimensions);
    const weights = rowWeights.slice(start, row);
    tools.set(toolId, { start, end: row, mean, weight: weights.reduce((sum, w) => sum + w, 0) / weights.length, contributors: new Set(list.map((example) => example.contributor)).size });
  }
  const postings = examples.length > PREFILTER_ABOVE ? termPostings(examples) : undefined;
  const scored = (queryTerms: readonly string[]): Iterable<[string, ToolEntry]> => {
    if (!postings) return tools;
    const ids = new Set<string>();
    for (const term of queryTerms) for (const toolId of postings.get(term) ?? []) ids.add(toolId);
    return [...ids].map((toolId) => [toolId, tools.get(toolId)!] as [string, ToolEntry]);
  };
  return {
    size: examples.length,
    toolCount: tools.size,
    ...(field ? { field } : {}),
    boosts(query, candidateIds) {
      const out = new Map<string, number>();
      for (const [toolId, entry] of scored(query.terms)) {
        if (candidateIds && !candidateIds.has(toolId)) continue;
        // The nearest example counts by its agreement weight; the mean is already weighted.
        const similarity = 0.5 * nearestRow(matrix, rowWeights, dimensions, entry.start, entry.end, query.vector) + 0.5 * entry.weight * dot(query.vector, entry.mean);
        const boost = boostOf(similarity, scoring) * Math.min(1, entry.contributors * scoring.contributorShare);
        if (boost > 0) out.set(toolId, boost);
      }
      return out;
    },
  };
}

/** An overlay with nothing in it. */
export const emptyOverlay: ScopeOverlay = { size: 0, toolCount: 0, boosts: () => new Map() };
