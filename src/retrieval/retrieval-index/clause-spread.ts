/**
 * @module retrieval/retrieval-index/clause-spread
 * A fair share of the top for every clause of a multi-intent request (issue #25). Fusion keeps
 * each tool's best clause score, so every clause's best tool reaches the top; but a clause with
 * several close tools (GDP → getCountryGDP, getPublicSectorGDP) also fills the next places,
 * and another clause's best can fall out of a small k. Going down the best tools in order,
 * each tool whose clause already placed n tools loses n × `spread` × the best score: a soft
 * interleave (never below half a tool's own score). A hard round-robin (clause by clause) was measured worse (Comp@10 0.916 vs
 * 0.934, docs/retrieval.md): framing sentences ("I need help planning a trip") and detail
 * sentences ("My customer ID is …") are clauses too and would take whole slots.
 */

/**
 * Lowers, in place, the scores of `candidates` (positions, best first) whose clause already placed
 * a tool. Greedy: the next tool is the one with the highest score after its clause's penalty, so
 * the written scores come out non-increasing in the new order and a plain top-k reads it.
 */
export function spreadClauses(final: Float32Array, candidates: readonly number[], bestClause: Uint16Array, spread: number): void {
  if (candidates.length < 2) return;
  const step = spread * final[candidates[0]!]!;
  if (!(step > 0)) return;
  const placed = new Map<number, number>();
  const open = [...candidates];
  const adjusted = new Float64Array(open.length);
  while (open.length > 0) {
    let pick = 0;
    for (let i = 0; i < open.length; i++) {
      // Never below half its own score: a weak tool is reordered, not dropped (top-k keeps scores > 0).
      const own = final[open[i]!]!;
      adjusted[i] = Math.max(own / 2, own - step * (placed.get(bestClause[open[i]!]!) ?? 0));
      if (adjusted[i]! > adjusted[pick]!) pick = i;
    }
    const d = open[pick]!;
    final[d] = adjusted[pick]!;
    placed.set(bestClause[d]!, (placed.get(bestClause[d]!) ?? 0) + 1);
    open.splice(pick, 1);
  }
}
