/**
 * @module core/forwarded-headers
 * Request headers a client addressed to the plugin behind Quiver (issue #24: the 2026-07-28
 * revision's `Mcp-Param-*` header parameters, SEP-2243). The HTTP front runs each request inside
 * `runWithForwardedHeaders`; the runtime's HTTP transport adds `currentForwardedHeaders()` to
 * the requests it makes for that request (the work runs in the request's async context, so
 * nothing has to carry them through the layers between). Outside such a request: none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const store = new AsyncLocalStorage<Readonly<Record<string, string>>>();
const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** Runs `work` with `headers` (lower-case names) forwarded to the plugin requests it makes. */
export function runWithForwardedHeaders<T>(headers: Readonly<Record<string, string>>, work: () => T): T {
  return Object.keys(headers).length === 0 ? work() : store.run(Object.freeze({ ...headers }), work);
}

/** The headers the current request forwards to plugins (none outside one). */
export function currentForwardedHeaders(): Readonly<Record<string, string>> {
  return store.getStore() ?? NONE;
}
