/**
 * @module retrieval/retrieval-index/bounded-memo
 * A memo of at most `capacity` entries keyed by query text, least recently used out first:
 * repeated requests (an agent retrying, selection's cache misses) skip analysis and embedding,
 * and a request that keeps coming back stays however many new ones pass (issue #25: with the
 * shipped model a miss costs an inference).
 */

/** A bounded LRU memo; `set` evicts the least recently used entry when full. */
export interface BoundedMemo<V> {
  readonly size: number;
  get(key: string): V | undefined;
  /** Stores the value and returns it. */
  set(key: string, value: V): V;
  clear(): void;
}

/** Creates an empty memo holding at most `capacity` entries. */
export function createBoundedMemo<V>(capacity: number): BoundedMemo<V> {
  const entries = new Map<string, V>();
  return {
    get size() {
      return entries.size;
    },
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        // Map keeps insertion order: re-inserting marks the entry most recently used.
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      entries.delete(key);
      if (entries.size >= capacity) entries.delete(entries.keys().next().value!);
      entries.set(key, value);
      return value;
    },
    clear: () => entries.clear(),
  };
}
