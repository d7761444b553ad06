/**
 * @module selection/lru-cache
 * A small LRU cache with a time-to-live per entry (seed 001 §4.3 `SimpleCache`): a `Map`
 * keeps insertion order, so a hit re-inserts the key and eviction drops the first key.
 * O(1) get and set; the clock is injected so tests control expiry.
 */

/** Hit / miss counters, for tests and the bench ("measure, don't assume"). */
export interface CacheStats {
  hits: number;
  misses: number;
  evictions: number;
}

/** An LRU cache whose entries expire `ttlMs` after they were set. */
export class LruTtlCache<V> {
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { value: V; expires: number }>();
  readonly stats: CacheStats = { hits: 0, misses: 0, evictions: 0 };

  constructor(options: { maxEntries: number; ttlMs: number; now?: () => number }) {
    if (!(options.maxEntries >= 1)) throw new RangeError('maxEntries must be at least 1');
    if (!(options.ttlMs > 0)) throw new RangeError('ttlMs must be positive');
    this.#maxEntries = Math.floor(options.maxEntries);
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** Number of entries held (expired ones included until they are touched). */
  get size(): number {
    return this.#entries.size;
  }

  /** The live value for `key`, or undefined (an expired entry is dropped). */
  get(key: string): V | undefined {
    const found = this.getEvenExpired(key);
    if (found?.expiredForMs === undefined) return found?.value;
    this.#entries.delete(key);
    return undefined;
  }

  /**
   * The value for `key` even when it expired, and how long ago it did (`expiredForMs`, absent
   * while live), for a caller that serves a stale value while it loads a fresh one; undefined
   * when absent. Counts and orders like `get`, except that an expired entry is kept.
   */
  getEvenExpired(key: string): { value: V; expiredForMs?: number } | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.stats.misses++;
      return undefined;
    }
    const late = this.#now() - entry.expires;
    // Re-insert so the key becomes the most recently used.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (late < 0) {
      this.stats.hits++;
      return { value: entry.value };
    }
    this.stats.misses++;
    return { value: entry.value, expiredForMs: late };
  }

  /** Stores `value` under `key` for the cache's TTL, evicting the least recently used entry when full. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expires: this.#now() + this.#ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
      this.stats.evictions++;
    }
  }

  /** Drops one key; returns true when it was present. */
  delete(key: string): boolean {
    return this.#entries.delete(key);
  }

  /** Drops every entry. */
  clear(): void {
    this.#entries.clear();
  }

  /** Applies `update` to every live value in place (e.g. a bandit outcome recorded locally). */
  forEachValue(update: (value: V, key: string) => void): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) if (entry.expires > now) update(entry.value, key);
  }
}
