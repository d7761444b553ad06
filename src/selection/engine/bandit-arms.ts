/**
 * @module selection/engine/bandit-arms
 * The bandit posteriors of each context, cached for `banditMs` and kept in step with the
 * increments this process commits (other processes' reach it by TTL or a `bandit` notification).
 */
import type { Database } from '../../store/database.ts';
import { listContextArms, type BanditIncrement } from '../../store/repositories/bandit-stats.ts';
import { LruTtlCache } from '../lru-cache.ts';
import type { BanditArm } from '../bandit.ts';
import type { CacheKind } from '../invalidation.ts';

/** The arms cache. */
export interface BanditArms {
  /** The arms of one context (tool id → posterior). */
  get(contextKey: string): Promise<Map<string, BanditArm>>;
  /** Applies increments just committed to the cached arms of their context. */
  apply(contextKey: string, increments: readonly BanditIncrement[]): void;
  /** Drops the cache on a `bandit` or `all` change. */
  invalidate(kind: CacheKind): void;
  /** The cache, for `cacheStats`. */
  readonly cache: LruTtlCache<unknown>;
}

/** Creates the arms cache. */
export function createBanditArms(options: { db: Database; now: () => number; banditMs: number }): BanditArms {
  const { db, now } = options;
  const banditCache = new LruTtlCache<Map<string, BanditArm>>({ maxEntries: 1024, ttlMs: options.banditMs, now });
  return {
    async get(contextKey) {
      const cached = banditCache.get(contextKey);
      if (cached) return cached;
      const arms = new Map<string, BanditArm>();
      for (const row of await listContextArms(db, contextKey)) arms.set(row.toolId, { alpha: row.alpha, beta: row.beta });
      banditCache.set(contextKey, arms);
      return arms;
    },
    apply(contextKey, increments) {
      const arms = banditCache.get(contextKey);
      if (!arms) return;
      for (const increment of increments) {
        if (increment.alpha === 0 && increment.beta === 0) continue;
        const arm = arms.get(increment.toolId) ?? { alpha: 1, beta: 1 };
        arms.set(increment.toolId, { alpha: arm.alpha + increment.alpha, beta: arm.beta + increment.beta });
      }
    },
    invalidate(kind) {
      if (kind === 'bandit' || kind === 'all') banditCache.clear();
    },
    cache: banditCache,
  };
}
