/**
 * @module retrieval/retrieval-index/query-vectors
 * One vector per text of a request, remembered by request text. When the embedder fails on
 * the query, the search ranks lexically and says so (DESIGN §3.4: relevance fails open).
 */
import type { Embedder } from '../embedders/embedder.ts';
import { checkVectors } from '../tool2vec.ts';
import type { BoundedMemo } from './bounded-memo.ts';

/** The texts' vectors (from the memo or the embedder), or undefined after a warning. */
export async function embedQueryTexts(
  embedder: Embedder,
  query: string,
  texts: readonly string[],
  memo: BoundedMemo<Float32Array[]>,
  warnings: string[],
  signal: AbortSignal | undefined,
): Promise<Float32Array[] | undefined> {
  const known = memo.get(query);
  if (known) return known;
  try {
    const vectors = await embedder.embed(texts, signal ? { signal } : undefined);
    checkVectors(embedder, vectors, texts.length);
    return memo.set(query, vectors);
  } catch (error) {
    warnings.push(`embedder ${embedder.modelId} failed on the query, ranking lexically: ${(error as Error).message}`);
    return undefined;
  }
}
