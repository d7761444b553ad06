/**
 * A database seen by an app that must not close it: tests that open several apps in turn on one
 * database (each with other settings) hand each this view, and close the database themselves.
 */
import type { Database } from '../../src/store/database.ts';

/** `db` with a `close` that does nothing. */
export function keptOpen(db: Database): Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'close') return async () => undefined;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
