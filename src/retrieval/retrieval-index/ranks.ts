/**
 * @module retrieval/retrieval-index/ranks
 * The explanation ranks of a result (`lexicalRank`, `vectorRank`): where the tool stands in
 * the whole request's lexical ranking and in its vector-similarity ranking, among the
 * candidates, ties broken by id as in the final ranking.
 */

/**
 * 1-based rank of document d in `scores` among candidates, or undefined when it did not
 * score (absent from the map, or not above 0 in the row).
 */
export function rankOf(scores: Float32Array | Map<number, number>, d: number, idOrder: Int32Array, mask: Uint8Array | undefined): number | undefined {
  const mine = scores instanceof Map ? scores.get(d) : scores[d];
  if (mine === undefined || (scores instanceof Float32Array && !(mine > 0))) return undefined;
  let rank = 1;
  const consider = (i: number, other: number): void => {
    if (i === d || (mask !== undefined && mask[i] !== 1)) return;
    if (other > mine || (other === mine && idOrder[i]! < idOrder[d]!)) rank++;
  };
  if (scores instanceof Map) for (const [i, other] of scores) consider(i, other);
  else for (let i = 0; i < scores.length; i++) consider(i, scores[i]!);
  return rank;
}
