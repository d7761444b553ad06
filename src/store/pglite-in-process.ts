/**
 * @module store/pglite-in-process
 * A Database over a PGlite running in this thread. Only the build-time template uses it
 * (scripts/build.mjs migrates a fresh in-memory PGlite, then dumps it); stores a process opens
 * run PGlite in a worker thread (pglite-database.ts, issue #28).
 */
import type { PGlite } from '@electric-sql/pglite';
import { runBatch, type Database, type Queryable, type QueryResult } from './database.ts';
import { mapDatabaseError } from './database-errors.ts';

interface PGliteLike {
  query<Row>(sql: string, params?: unknown[]): Promise<{ rows: Row[]; affectedRows?: number }>;
}

function wrap(target: PGliteLike): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      try {
        const result = await target.query<Row>(sql, [...params]);
        return { rows: result.rows, affectedRows: result.affectedRows ?? 0 };
      } catch (error) {
        throw mapDatabaseError(error);
      }
    },
  };
}

/** `pg` as a Database; closing it closes `pg`. */
export function inProcessDatabase(pg: PGlite): Database {
  const base = wrap(pg);
  return {
    engine: 'pglite',
    query: base.query,
    async exec(sql) {
      await pg.exec(sql);
    },
    async transaction(work) {
      return pg.transaction(async (tx) => work(wrap(tx)));
    },
    async batch(statements) {
      if (statements.length === 0) return [];
      return pg.transaction(async (tx) => runBatch(wrap(tx), statements));
    },
    async listen(_channel, handler) {
      const unsubscribe = await pg.listen(_channel, handler);
      return async () => {
        if (!pg.closed) await unsubscribe();
      };
    },
    async notify(channel, payload) {
      await pg.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      await pg.close();
    },
  };
}
