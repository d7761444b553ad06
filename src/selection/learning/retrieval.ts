/**
 * @module selection/learning/retrieval
 * A `SelectionRetrieval` that adds a request's learned-example boosts (overlay.ts) of the
 * caller's organisation to the shared index's scores (issue #13). Only the caller's scope is
 * read, so one tenant's traffic never shapes another's ranking; a search without `orgId`
 * (eval, admin test-selection without a tenant) is the shared index alone. Relevance only:
 * any failure here falls back to the shared ranking with a warning.
 */
import type { RetrievalHit, RetrievalSearchOptions, SelectionRetrieval } from '../retrieval.ts';
import { pullSuccessors } from './called-after.ts';
import type { Learning } from './learning.ts';

type Found = { results: RetrievalHit[]; warnings?: string[] };

/**
 * Adds boosted tools' base scores when the pool missed them. A search restricted to a few ids
 * normalises its scores by the best of *those* ids, so the pool's tools are searched with them
 * (the same normalisers) and the result rescaled to the pool's scale; and since the pool held
 * the best k + boosted tools, a tool outside it scores at most the pool's lowest.
 */
async function baseScores(base: SelectionRetrieval, query: string, found: Found, boosted: Iterable<string>, options: RetrievalSearchOptions): Promise<Map<string, number>> {
  const scores = new Map(found.results.map((hit) => [hit.id, hit.score]));
  const missing = new Set([...boosted].filter((id) => !scores.has(id)));
  if (missing.size === 0) return scores;
  const lowest = found.results.length > 0 ? Math.min(...found.results.map((hit) => hit.score)) : 0;
  const reference = found.results[0];
  if (reference) {
    const ids = new Set([...missing, ...scores.keys()]);
    const extra = await base.search(query, { k: ids.size, candidateIds: ids, includeRanks: false, ...(options.orgId === undefined ? {} : { orgId: options.orgId }), ...(options.learned ? { learned: options.learned } : {}) });
    const again = extra.results.find((hit) => hit.id === reference.id)?.score;
    const scale = again !== undefined && again > 0 ? reference.score / again : 0;
    for (const hit of extra.results) if (missing.has(hit.id)) scores.set(hit.id, Math.min(lowest, hit.score * scale));
  }
  for (const id of missing) if (!scores.has(id)) scores.set(id, 0);
  return scores;
}

/** Wraps `base` with the learned-example overlay and the "called after" transitions of each request's organisation. */
export function withLearnedExamples(base: SelectionRetrieval, learning: Pick<Learning, 'overlayFor' | 'analyseQuery' | 'calledAfterFor'>): SelectionRetrieval {
  const boosted = withBoosts(base, learning);
  return {
    ...boosted,
    async search(query, options) {
      const found = await boosted.search(query, options);
      if (options.orgId === undefined) return found;
      const transitions = learning.calledAfterFor(options.orgId);
      if (!transitions || transitions.size === 0) return found;
      return { ...found, results: pullSuccessors(found.results, transitions, { k: options.k, candidateIds: options.candidateIds }) };
    },
  };
}

/** The learned-example boosts alone. */
function withBoosts(base: SelectionRetrieval, learning: Pick<Learning, 'overlayFor' | 'analyseQuery'>): SelectionRetrieval {
  return {
    method: base.method,
    build: (documents) => base.build(documents),
    ...(base.upsert ? { upsert: (documents: Parameters<NonNullable<SelectionRetrieval['upsert']>>[0]) => base.upsert!(documents) } : {}),
    ...(base.remove ? { remove: (ids: readonly string[]) => base.remove!(ids) } : {}),
    async search(query, options) {
      if (options.orgId === undefined) return base.search(query, options);
      const overlay = learning.overlayFor(options.orgId);
      if (!overlay || overlay.size === 0) return base.search(query, options);
      // The learned requests enter the shared index's scoring as the tools' example field (issue #25).
      const withField: RetrievalSearchOptions = overlay.field ? { ...options, learned: overlay.field } : options;
      let boosts: Map<string, number>;
      try {
        boosts = overlay.boosts(await learning.analyseQuery(query), options.candidateIds);
      } catch {
        const found = await base.search(query, withField);
        return { results: found.results, warnings: [...(found.warnings ?? []), 'learned examples could not be scored; shared ranking kept'] };
      }
      if (boosts.size === 0) return base.search(query, withField);
      // Widen the pool by the boosted tools, so a boost can lift a tool into the top k.
      const found = await base.search(query, { ...withField, k: options.k + boosts.size });
      // Boosts are relative to the request's best base score; with no base match, to 1.
      const best = found.results[0]?.score ?? 0;
      const top = best > 0 ? best : 1;
      const scores = await baseScores(base, query, found, boosts.keys(), withField);
      const results = [...scores]
        .map(([id, score]) => ({ id, score: score + top * (boosts.get(id) ?? 0) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, options.k);
      return { results, ...(found.warnings ? { warnings: found.warnings } : {}) };
    },
  };
}
