/**
 * @module retrieval/embedders/embedder
 * The Embedder specification: a versioned plug in the style of the Vercel AI SDK's
 * `EmbeddingModelV1` (`specificationVersion`, `modelId`, batched `doEmbed`). Everything that
 * turns text into vectors (the built-in offline embedder, a local transformers.js model,
 * an OpenAI-compatible endpoint) implements it; retrieval depends on nothing else.
 */

/** A text embedder. Vectors are L2-normalised so cosine similarity is a dot product (seed 001 §6.3). */
export interface Embedder {
  readonly specificationVersion: 'v1';
  /** Which implementation this is, e.g. `quiver-offline`, `transformers`, `openai-compatible`. */
  readonly provider: string;
  /** Identifies the model and its settings: vectors from different ids are never compared or reused. */
  readonly modelId: string;
  /** Length of every vector. */
  readonly dimensions: number;
  /** Largest batch `embed` sends at once (callers may pass more; the embedder splits them). */
  readonly maxBatchSize: number;
  /** Embeds texts in order; the result has one vector per text. */
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]>;
  /** Releases resources (model sessions, sockets). */
  close?(): Promise<void>;
}

/** Scales a vector to unit length in place (a zero vector stays zero). */
export function normalizeInPlace(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  if (sum > 0) {
    const scale = 1 / Math.sqrt(sum);
    for (let i = 0; i < vector.length; i++) vector[i]! *= scale;
  }
  return vector;
}

/** Dot product of two equal-length vectors. */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Mean of vectors, L2-normalised (Tool2Vec, seed 001 §6.2). */
export function meanVector(vectors: readonly Float32Array[], dimensions: number): Float32Array {
  const mean = new Float32Array(dimensions);
  for (const vector of vectors) for (let i = 0; i < dimensions; i++) mean[i]! += vector[i]!;
  return normalizeInPlace(mean);
}

/** Splits `items` into batches of at most `size`. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, size)) result.push(items.slice(i, i + Math.max(1, size)));
  return result;
}

/**
 * Providers whose embedding costs well under a millisecond per text in this process (the hashed
 * offline embedder, the distilled token table): they may embed on a request's path, so an index
 * embeds tools that have no stored vector at build time instead of ranking them lexically
 * until the background worker catches up (issue #25). Their vectors are static word features,
 * so fusion gives them a lower weight than a contextual model's (`retrieval-index/settings.ts`).
 */
export const inlineProviders: ReadonlySet<string> = new Set(['quiver-offline', 'use-lite-table']);

/** Whether `embedder` is cheap enough to run on the request path (see `inlineProviders`). */
export function embedsInline(embedder: Embedder | undefined): boolean {
  return embedder !== undefined && inlineProviders.has(embedder.provider);
}
