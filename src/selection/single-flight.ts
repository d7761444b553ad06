/**
 * @module selection/single-flight
 * Concurrent cache misses of one key share one load. Under load, every search that missed a
 * visibility cache after an invalidation asked the database itself (measured in the 150-session
 * HTTP bench: ~450 enablement and ~300 workspace lookups per run for 5 organisations).
 *
 * A load begun before an invalidation is never joined by a caller arriving after it, and its
 * result is not stored: that caller might otherwise see access as it was before the change
 * (the same race the catalog snapshot closes, issue #23).
 */
export interface SingleFlight<T> {
  /** Joins the running load of `key` or starts `load`; `store` caches the result unless invalidated meanwhile. */
  run(key: string, load: () => Promise<T>, store: (value: T) => void): Promise<T>;
  /** Loads running now are neither joined nor stored from here on. */
  invalidate(): void;
}

export function createSingleFlight<T>(): SingleFlight<T> {
  let generation = 0;
  const running = new Map<string, Promise<T>>();
  return {
    run(key, load, store) {
      const joined = running.get(key);
      if (joined) return joined;
      const started = generation;
      const promise: Promise<T> = load()
        .then((value) => {
          if (started === generation) store(value);
          return value;
        })
        .finally(() => {
          if (running.get(key) === promise) running.delete(key);
        });
      running.set(key, promise);
      return promise;
    },
    invalidate() {
      generation += 1;
      running.clear();
    },
  };
}
