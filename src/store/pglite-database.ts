/**
 * @module store/pglite-database
 * The embedded engine: PGlite with pgvector, in memory or in a data folder. PGlite is a
 * single connection; it serialises queries itself, so no pool semantics are assumed here.
 */
import { PGlite, types } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Database, NotificationHandler, QueryResult, Queryable } from './database.ts';
import { assertChannelName } from './database.ts';

const int8Parsers = {
  [types.INT8]: (value: string) => Number(value),
};

interface PGliteLike {
  query<Row>(sql: string, params?: unknown[]): Promise<{ rows: Row[]; affectedRows?: number }>;
}

function wrap(target: PGliteLike): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await target.query<Row>(sql, [...params]);
      return { rows: result.rows, affectedRows: result.affectedRows ?? 0 };
    },
  };
}

/**
 * PostgreSQL settings for the embedded engine. PGlite keeps its shared buffers inside the
 * WASM heap, which never shrinks; the server default (128 MB) costs ~120 MB of RSS for a
 * catalog that the OS page cache holds anyway. Measured by `quiver bench` (memory section).
 */
export const PGLITE_SETTINGS = ['shared_buffers = 32MB'];

/** Opens PGlite with pgvector. `dataDir` undefined means in memory. */
export async function openPGlite(options: { dataDir?: string; onClose?: () => void } = {}): Promise<Database> {
  const pg = await PGlite.create({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    extensions: { vector },
    parsers: int8Parsers,
    postgresqlconf: PGLITE_SETTINGS,
  });
  const base = wrap(pg);
  let closed = false;
  return {
    engine: 'pglite',
    query: base.query,
    async exec(sql) {
      await pg.exec(sql);
    },
    async transaction(work) {
      return pg.transaction(async (tx) => work(wrap(tx)));
    },
    async listen(channel: string, handler: NotificationHandler) {
      assertChannelName(channel);
      const unsubscribe = await pg.listen(channel, handler);
      return async () => {
        if (!closed) await unsubscribe();
      };
    },
    async notify(channel, payload) {
      assertChannelName(channel);
      await pg.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await pg.close();
      } finally {
        options.onClose?.();
      }
    },
  };
}
