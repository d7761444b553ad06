/**
 * @module core/idle-require
 * A CommonJS package loaded on use and let go once unused for a while (issue #28): the o200k
 * tokenizer holds ~20 MB of heap (a 200,000-entry rank map, its strings and its source) for
 * counts the selection caches keep anyway, so a server that counted its catalog once carried
 * the tables for nothing. Letting go means dropping the module files this load brought into
 * `require.cache` (and the throw-away parent module that lists them as children), so nothing
 * keeps them and the next use requires them afresh: same module, same answers, a reload's cost.
 */
import { createRequire } from 'node:module';

/** Options of `idleRequire`. */
export interface IdleRequireOptions {
  /** Let the module go after this long without a `get` (ms). */
  idleMs: number;
  /** The clock (default `Date.now`). */
  now?: () => number;
}

/** A module held while used. */
export interface IdleModule<T> {
  /** The module, required now if it is not held. */
  get(): T;
  /** Whether it is held now. */
  readonly loaded: boolean;
  /** Lets it go now (the idle timer does this by itself). */
  release(): void;
}

/**
 * The module `specifier` (resolved from Quiver's own node_modules), required on the first
 * `get` and released `idleMs` after the last one. Files that were already loaded before the
 * first `get` (by another importer) are left in the cache.
 *
 * @example
 * const tokenizer = idleRequire<typeof import('gpt-tokenizer/encoding/o200k_base')>('gpt-tokenizer/encoding/o200k_base', { idleMs: 30_000 });
 * tokenizer.get().encode(text);
 */
export function idleRequire<T extends object>(specifier: string, options: IdleRequireOptions): IdleModule<T> {
  const now = options.now ?? (() => Date.now());
  let held: { module: T; files: string[] } | undefined;
  let lastUse = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const release = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (held === undefined) return;
    const cache = createRequire(import.meta.url).cache;
    for (const file of held.files) delete cache[file];
    held = undefined;
  };

  // One timer per idle period, not one per use: a catalog's count calls `get` 10,000 times.
  const arm = (delay: number): void => {
    timer = setTimeout(() => {
      timer = undefined;
      const idle = now() - lastUse;
      if (idle >= options.idleMs) release();
      else arm(options.idleMs - idle);
    }, delay);
    timer.unref?.();
  };

  return {
    get() {
      lastUse = now();
      if (held === undefined) {
        // A fresh require (and so a fresh parent module) per load: the parent lists what it
        // required as children, and would keep the released files alive.
        const require = createRequire(import.meta.url);
        const before = new Set(Object.keys(require.cache));
        const module = require(specifier) as T;
        held = { module, files: Object.keys(require.cache).filter((file) => !before.has(file)) };
      }
      if (timer === undefined) arm(options.idleMs);
      return held.module;
    },
    get loaded() {
      return held !== undefined;
    },
    release,
  };
}
