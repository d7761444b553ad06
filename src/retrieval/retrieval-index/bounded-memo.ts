/**
 * @module retrieval/retrieval-index/bounded-memo
 * A memo of at most `capacity` entries keyed by query text, oldest out first: repeated
 * requests (an agent retrying, selection's cache misses) skip analysis and embedding.
 */

/** A bounded memo; `set` evicts the oldest entry when full. */
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
    get: (key) => entries.get(key),
    set(key, value) {
      if (entries.size >= capacity) entries.delete(entries.keys().next().value!);
      entries.set(key, value);
      return value;
    },
    clear: () => entries.clear(),
  };
}
