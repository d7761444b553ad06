/**
 * @module selection/engine/bandit-arms
 * The bandit posteriors of each context, cached for `banditMs` and kept in step with the
 * increments this process commits (other processes' reach it by TTL or a `bandit` notification).
 * Each context also keeps its outcomes summed over every arm (the prior of the pool's rate,
 * `contextOutcomes`) as a running total changed with each arm, so a selection reads it
 * instead of walking every arm of the context (issue #28).
 *
 * Arms that expired are still handed out while one read reloads them (for up to another
 * `banditMs`; issue #28): a selection never waits for the database on a TTL expiry. Under 150
 * HTTP sessions a context's read queued behind the embedded store's batched writes for 50–300 ms,
 * and every selection of that context waited for it (about 1.4 % of the searches, the p99).
 * Concurrent reads of one context are one read. Increments committed while a read is in flight
 * may be missing from what it returns until the next reload, as with a read after a miss.
 */
import type { Database } from '../../store/database.ts';
import { listContextArms, type BanditIncrement } from '../../store/repositories/bandit-stats.ts';
import { LruTtlCache } from '../lru-cache.ts';
import { createSingleFlight } from '../single-flight.ts';
import { armOutcomes, type BanditArm } from '../bandit.ts';
import type { CacheKind } from '../invalidation.ts';

/** The arms of one context and their outcomes summed. */
export interface ContextArms {
  /** Tool id → posterior (frozen: every change goes through the cache, which keeps `outcomes` in step). */
  readonly arms: ReadonlyMap<string, Readonly<BanditArm>>;
  /** Successes Σ(α − 1) and failures Σ(β − 1) over `arms`: what `contextOutcomes(arms.values())` returns. */
  outcomes(): { successes: number; failures: number };
}

/** A context's arms with the running total; the only way its arms change. */
class ContextArmSet implements ContextArms {
  readonly #arms = new Map<string, Readonly<BanditArm>>();
  #successes = 0;
  #failures = 0;

  get arms(): ReadonlyMap<string, Readonly<BanditArm>> {
    return this.#arms;
  }

  outcomes(): { successes: number; failures: number } {
    return { successes: this.#successes, failures: this.#failures };
  }

  /** Sets one arm, taking the arm it replaces out of the total and this one in. */
  set(toolId: string, arm: BanditArm): void {
    const previous = this.#arms.get(toolId);
    if (previous) {
      const old = armOutcomes(previous);
      this.#successes -= old.successes;
      this.#failures -= old.failures;
    }
    const frozen = Object.freeze({ alpha: arm.alpha, beta: arm.beta });
    const own = armOutcomes(frozen);
    this.#successes += own.successes;
    this.#failures += own.failures;
    this.#arms.set(toolId, frozen);
  }
}

/** The arms cache. */
export interface BanditArms {
  /** The arms of one context (tool id → posterior) and their outcomes summed. */
  get(contextKey: string): Promise<ContextArms>;
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
  const banditCache = new LruTtlCache<ContextArmSet>({ maxEntries: 1024, ttlMs: options.banditMs, now });
  // A read begun before an invalidation is not stored (single-flight's generation).
  const reads = createSingleFlight<ContextArmSet>();
  const read = (contextKey: string): Promise<ContextArmSet> =>
    reads.run(
      contextKey,
      async () => {
        const arms = new ContextArmSet();
        for (const row of await listContextArms(db, contextKey)) arms.set(row.toolId, { alpha: row.alpha, beta: row.beta });
        return arms;
      },
      (arms) => banditCache.set(contextKey, arms),
    );
  return {
    get(contextKey) {
      const cached = banditCache.getEvenExpired(contextKey);
      const expiredForMs = cached?.expiredForMs;
      if (cached && expiredForMs === undefined) return Promise.resolve(cached.value);
      if (cached && expiredForMs !== undefined && expiredForMs < options.banditMs) {
        const stale = cached.value;
        // A failed reload drops the expired arms, so the next selection reads them itself and reports the failure.
        read(contextKey).catch(() => {
          if (banditCache.getEvenExpired(contextKey)?.value === stale) banditCache.delete(contextKey);
        });
        return Promise.resolve(stale);
      }
      return read(contextKey);
    },
    apply(contextKey, increments) {
      // Expired arms still serve selections until their reload lands: they take increments too.
      const arms = banditCache.getEvenExpired(contextKey)?.value;
      if (!arms) return;
      for (const increment of increments) {
        if (increment.alpha === 0 && increment.beta === 0) continue;
        const arm = arms.arms.get(increment.toolId) ?? { alpha: 1, beta: 1 };
        arms.set(increment.toolId, { alpha: arm.alpha + increment.alpha, beta: arm.beta + increment.beta });
      }
    },
    invalidate(kind) {
      if (kind !== 'bandit' && kind !== 'all') return;
      reads.invalidate();
      banditCache.clear();
    },
    cache: banditCache,
  };
}
