/**
 * @module retrieval/tool2vec
 * A tool's vector (seed 001 §5.4, §6.2). Tool2Vec represents a tool by the mean of its
 * example queries' vectors, which lands it where users' requests are rather than where its
 * description is. Quiver blends that mean with the text vector instead of replacing it:
 * measured on MetaTool with the offline embedder, vector-only R@1 is 0.560 for the example
 * mean alone, 0.579 at a 0.25 text share, 0.514 at 0.75 (docs/retrieval.md). A tool with
 * no examples is represented by its text.
 */
import { documentText, type RetrievalDocument } from './document.ts';
import { meanVector, normalizeInPlace, type Embedder } from './embedders/embedder.ts';
import { QuiverError } from '../core/errors.ts';

/** Throws when an embedder returned the wrong number or size of vectors (a broken plug). */
export function checkVectors(embedder: Embedder, vectors: readonly Float32Array[], expected: number): void {
  if (vectors.length !== expected) {
    throw new QuiverError('embedder_failed', `embedder ${embedder.modelId} returned ${vectors.length} vectors for ${expected} texts`);
  }
  for (const vector of vectors) {
    if (vector.length !== embedder.dimensions) {
      throw new QuiverError('embedder_failed', `embedder ${embedder.modelId} returned a ${vector.length}-dimensional vector, expected ${embedder.dimensions}`);
    }
  }
}

/** Share of the text vector in a tool with examples (the rest is the example mean). */
export const defaultTextShare = 0.25;

/** Embeds documents into tool vectors, batching every text through the embedder. */
export async function embedDocuments(
  embedder: Embedder,
  documents: readonly RetrievalDocument[],
  options: { textShare?: number; signal?: AbortSignal } = {},
): Promise<Float32Array[]> {
  const textShare = options.textShare ?? defaultTextShare;
  const texts: string[] = [];
  const spans: { text: number; examplesStart: number; examplesEnd: number }[] = [];
  for (const document of documents) {
    const text = texts.push(documentText(document)) - 1;
    const examplesStart = texts.length;
    for (const example of document.exampleQueries ?? []) if (example.trim()) texts.push(example);
    spans.push({ text, examplesStart, examplesEnd: texts.length });
  }
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += embedder.maxBatchSize) {
    const batch = texts.slice(start, start + embedder.maxBatchSize);
    const embedded = await embedder.embed(batch, options.signal ? { signal: options.signal } : undefined);
    checkVectors(embedder, embedded, batch.length);
    vectors.push(...embedded);
  }
  return spans.map(({ text, examplesStart, examplesEnd }) => {
    const textVector = vectors[text]!;
    if (examplesEnd === examplesStart) return textVector;
    const mean = meanVector(vectors.slice(examplesStart, examplesEnd), embedder.dimensions);
    const blended = new Float32Array(embedder.dimensions);
    for (let i = 0; i < blended.length; i++) blended[i] = textShare * textVector[i]! + (1 - textShare) * mean[i]!;
    return normalizeInPlace(blended);
  });
}
