/**
 * @module core/lazy-require
 * A CommonJS package loaded on first use instead of at import (issue #28: the TypeScript
 * compiler and the tokenizer cost about half a second and 120 MB at start, and `quiver --help`
 * or a forwarded command never needs them). The returned object stands in for the module:
 * the first property read requires it, later reads go straight to the loaded module. Loading
 * stays synchronous, so callers keep their synchronous signatures.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * The module `specifier` (resolved from Quiver's own node_modules), required on the first
 * property access.
 *
 * @example
 * const typescript = lazyRequire<typeof import('typescript')>('typescript');
 * typescript.createSourceFile(...); // the compiler loads here, not at import
 */
export function lazyRequire<T extends object>(specifier: string): T {
  let loaded: T | undefined;
  const load = (): T => (loaded ??= require(specifier) as T);
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(load(), key),
    has: (_target, key) => Reflect.has(load(), key),
  });
}
