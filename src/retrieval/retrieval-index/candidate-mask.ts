/**
 * @module retrieval/retrieval-index/candidate-mask
 * The candidate filter: selection applies policy before retrieval and passes the visible
 * tool ids as a Set. Its mask over the snapshot's positions is cached by Set identity (and
 * size), so callers that reuse one Set per visible set pay O(size) once.
 */

/** Cached masks by Set; `mask` is undefined when the Set covers every document. */
export type CandidateMasks = WeakMap<ReadonlySet<string>, { size: number; mask: Uint8Array | undefined }>;

/**
 * The mask of `candidateIds` over `positionOf` (1 = candidate), or undefined when the Set
 * covers every one of the `size` documents, so the hot loops skip the per-document check.
 * Unknown ids are ignored.
 */
export function candidateMask(
  masks: CandidateMasks,
  positionOf: ReadonlyMap<string, number>,
  size: number,
  candidateIds: ReadonlySet<string>,
): Uint8Array | undefined {
  const cached = masks.get(candidateIds);
  if (cached && cached.size === candidateIds.size) return cached.mask;
  let mask: Uint8Array | undefined = new Uint8Array(size);
  let covered = 0;
  for (const id of candidateIds) {
    const position = positionOf.get(id);
    if (position !== undefined && mask[position] === 0) {
      mask[position] = 1;
      covered++;
    }
  }
  if (covered === size) mask = undefined;
  masks.set(candidateIds, { size: candidateIds.size, mask });
  return mask;
}
