/**
 * @module selection/engine/page-sets
 * Pipeline stage 3, the page context: which visible, unpinned tools retrieval may return for a
 * page (those in a category mapped to it). A relevance stage: when the mappings cannot be read
 * or match nothing visible, the filter is skipped with a warning (fail open), and a degraded
 * answer is not cached.
 */
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import { listPageMappings, type PageMappingRecord } from '../../store/repositories/page-mappings.ts';
import { matchPageMappings } from '../../catalog/page-pattern.ts';
import { LruTtlCache } from '../lru-cache.ts';
import type { CacheKind } from '../invalidation.ts';
import type { PageSet, VisibleSet } from './types.ts';

/** The page stage and its caches. */
export interface PageSets {
  /** The retrieval set of a visible set on a page (`null`: no page, no filter). */
  get(visibleKey: string, visible: VisibleSet, page: string | null): Promise<PageSet>;
  /** Drops what a catalog change of this kind makes stale. */
  invalidate(kind: CacheKind): void;
  /** A new catalog snapshot: the page sets are rebuilt. */
  onCatalogReload(): void;
  /** The caches, for `cacheStats`. */
  readonly caches: { pageMappings: LruTtlCache<unknown>; pageSets: LruTtlCache<unknown> };
}

/** Creates the page stage. */
export function createPageSets(options: { db: Database; logger: Logger; now: () => number; ttl: { policyMs: number; mappingsMs: number } }): PageSets {
  const { db, logger, now, ttl } = options;
  const pageCategoryCache = new LruTtlCache<Set<string> | null>({ maxEntries: 512, ttlMs: ttl.mappingsMs, now });
  const pageSetCache = new LruTtlCache<PageSet>({ maxEntries: 512, ttlMs: Math.min(ttl.policyMs, ttl.mappingsMs), now });
  let mappingsSnapshot: { mappings: PageMappingRecord[]; at: number } | undefined;
  // Mappings invalidations and page-set clears so far. What was read or derived before one is
  // answered to its own caller but not stored: stored after the clear, it would stay stale until
  // its TTL (the race the catalog snapshot closes, issue #23).
  let mappingsChanges = 0;
  let pageSetClears = 0;

  async function pageCategories(page: string): Promise<Set<string> | null> {
    const cached = pageCategoryCache.get(page);
    if (cached !== undefined) return cached;
    const basis = mappingsChanges;
    let mappings = mappingsSnapshot !== undefined && now() - mappingsSnapshot.at < ttl.mappingsMs ? mappingsSnapshot.mappings : undefined;
    if (mappings === undefined) {
      mappings = await listPageMappings(db);
      if (basis === mappingsChanges) mappingsSnapshot = { mappings, at: now() };
    }
    const matched = matchPageMappings(mappings, page);
    const result = matched.length === 0 ? null : new Set(matched.map((mapping) => mapping.categoryId));
    if (basis === mappingsChanges) pageCategoryCache.set(page, result);
    return result;
  }

  async function get(visibleKey: string, visible: VisibleSet, page: string | null): Promise<PageSet> {
    const key = `${visibleKey}|${page === null ? '~' : JSON.stringify(page)}`;
    const cached = pageSetCache.get(key);
    if (cached) return cached;
    const basis = pageSetClears;
    const store = (set: PageSet): void => {
      if (basis === pageSetClears) pageSetCache.set(key, set);
    };
    const unpinned = visible.tools.filter((tool) => !tool.isAlwaysPinned);
    const unfiltered = (warning?: string): PageSet => ({
      retrievalIds: new Set(unpinned.map((tool) => tool.id)),
      ordered: unpinned,
      filtered: false,
      ...(warning === undefined ? {} : { warning }),
    });
    if (page === null) {
      const set = unfiltered();
      store(set);
      return set;
    }
    let categories: Set<string> | null;
    try {
      categories = await pageCategories(page);
    } catch (error) {
      // Relevance stage: fail open, and do not cache the degraded answer.
      logger.warn({ err: error, page }, 'selection: page mappings could not be read');
      return unfiltered('page mappings could not be read; the page filter was skipped');
    }
    if (categories === null) {
      const set = unfiltered();
      store(set);
      return set;
    }
    const ordered = unpinned.filter((tool) => tool.categoryId !== null && categories.has(tool.categoryId));
    const set =
      ordered.length === 0
        ? unfiltered(`no visible tool is in a category mapped to page '${page}'; the page filter was skipped`)
        : { retrievalIds: new Set(ordered.map((tool) => tool.id)), ordered, filtered: true };
    store(set);
    return set;
  }

  return {
    get,
    invalidate(kind) {
      if (kind === 'mappings' || kind === 'all') {
        mappingsChanges += 1;
        mappingsSnapshot = undefined;
        pageCategoryCache.clear();
      }
      // Page sets derive from the visible sets and the mappings: every change but the bandit's.
      if (kind !== 'bandit') {
        pageSetClears += 1;
        pageSetCache.clear();
      }
    },
    onCatalogReload() {
      pageSetClears += 1;
      pageSetCache.clear();
    },
    caches: { pageMappings: pageCategoryCache, pageSets: pageSetCache },
  };
}
