/**
 * @module gateway/search-history
 * Redundant-search detection (seed 004 §8): a per-session history of recent searches. When a
 * new search returns a result set that overlaps a recent one (within a time window) above a
 * ratio, the search is redundant: the gateway still runs it, but answers with a note and the
 * names of tools already available instead of repeating their schemas. Pure, with a clock.
 */

export interface SearchHistoryOptions {
  /** Overlap |new ∩ old| / |new| at or above which a search is redundant (0–1]. */
  overlapRatio: number;
  /** How long a search stays "recent", ms. */
  windowMs: number;
  /** Most searches remembered. */
  size: number;
  now: () => number;
}

/** Defaults: 80 % overlap with one of the last 8 searches in the last 10 minutes. */
export const DEFAULT_SEARCH_HISTORY_OPTIONS: Omit<SearchHistoryOptions, 'now'> = Object.freeze({
  overlapRatio: 0.8,
  windowMs: 10 * 60_000,
  size: 8,
});

/** What the history says about a search. */
export type RedundancyVerdict =
  | { redundant: false }
  | { redundant: true; overlap: number; previousQuery: string; secondsAgo: number };

/** Remembered searches as plain data, oldest first. */
export type SearchHistorySnapshot = Array<{ query: string; results: string[]; at: number }>;

interface Entry {
  query: string;
  results: ReadonlySet<string>;
  at: number;
}

/** The recent searches of one session. */
export class SearchHistory {
  readonly #options: Readonly<SearchHistoryOptions>;
  #entries: Entry[] = [];

  constructor(options: SearchHistoryOptions) {
    if (!(options.overlapRatio > 0 && options.overlapRatio <= 1)) throw new RangeError('overlapRatio must be in (0, 1]');
    if (!(options.windowMs > 0) || !(options.size >= 1)) throw new RangeError('windowMs and size must be positive');
    this.#options = Object.freeze({ ...options });
  }

  /** Compares a search's results with the recent ones, then remembers it. Empty results are never redundant. */
  record(query: string, results: readonly string[]): RedundancyVerdict {
    const now = this.#options.now();
    this.#entries = this.#entries.filter((entry) => now - entry.at <= this.#options.windowMs);
    let verdict: RedundancyVerdict = { redundant: false };
    if (results.length > 0) {
      let best: { overlap: number; entry: Entry } | undefined;
      for (const entry of this.#entries) {
        const shared = results.filter((name) => entry.results.has(name)).length;
        const overlap = shared / results.length;
        if (overlap >= this.#options.overlapRatio && (!best || overlap > best.overlap || entry.at > best.entry.at)) {
          best = { overlap, entry };
        }
      }
      if (best) {
        verdict = {
          redundant: true,
          overlap: best.overlap,
          previousQuery: best.entry.query,
          secondsAgo: Math.round((now - best.entry.at) / 1000),
        };
      }
    }
    this.#entries.push({ query, results: new Set(results), at: now });
    while (this.#entries.length > this.#options.size) this.#entries.shift();
    return verdict;
  }

  /** The remembered searches as plain data (issue #16: shared sessions). */
  snapshot(): SearchHistorySnapshot {
    return this.#entries.map((entry) => ({ query: entry.query, results: [...entry.results], at: entry.at }));
  }

  /** Replaces the remembered searches with a snapshot's. */
  restore(snapshot: SearchHistorySnapshot): void {
    this.#entries = snapshot.slice(-this.#options.size).map((entry) => ({ query: entry.query, results: new Set(entry.results), at: entry.at }));
  }

  /** Number of remembered searches. */
  get size(): number {
    return this.#entries.length;
  }
}
