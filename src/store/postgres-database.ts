/**
 * @module store/postgres-database
 * The scale-out engine: a real PostgreSQL with pgvector through a node-postgres pool.
 * LISTEN uses one dedicated client so notifications reach every replica.
 */
import pg from 'pg';
import type { Database, NotificationHandler, QueryResult, Queryable } from './database.ts';
import { assertChannelName, runBatch } from './database.ts';
import { mapDatabaseError } from './database-errors.ts';

const INT8_OID = 20;

function makeTypes(): pg.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: string) =>
      oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
  };
}

function wrap(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
      try {
        const result = await client.query({ text: sql, values: [...params], types: makeTypes() });
        return { rows: result.rows as Row[], affectedRows: result.rowCount ?? 0 };
      } catch (error) {
        throw mapDatabaseError(error);
      }
    },
  };
}

/** Opens a pool to `url` (postgres://…). The pool size defaults to 10. */
export async function openPostgres(url: string, options: { poolSize?: number } = {}): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  // A failed idle client must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Fail fast on a wrong URL rather than on the first request.
  const probe = await pool.connect();
  probe.release();

  const base = wrap(pool);
  let listener: pg.PoolClient | undefined;
  const handlers = new Map<string, Set<NotificationHandler>>();

  let closing = false;

  /** Tells every handler that notifications may have been missed (an empty payload). */
  function announceGap(): void {
    for (const set of handlers.values()) for (const handler of set) handler('');
  }

  // Concurrent first listens (the key service and the selection engine start together) must
  // share one connection: a second one would never be released and `close()` would wait forever.
  let connecting: Promise<pg.PoolClient> | undefined;

  function listenerClient(): Promise<pg.PoolClient> {
    if (listener) return Promise.resolve(listener);
    connecting ??= connectListener().finally(() => {
      connecting = undefined;
    });
    return connecting;
  }

  async function connectListener(): Promise<pg.PoolClient> {
    const client = await pool.connect();
    client.on('notification', (message) => {
      for (const handler of handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    // A lost LISTEN connection would silently stop cache invalidation and key revocation in this
    // replica: drop every cache at once (empty payload), then listen again and drop them once more
    // for whatever was sent while nobody listened.
    const lost = () => {
      if (listener !== client) return;
      listener = undefined;
      client.release(true);
      announceGap();
      if (!closing && handlers.size > 0) void relisten(1);
    };
    client.on('error', lost);
    client.on('end', lost);
    listener = client;
    return client;
  }

  async function relisten(attempt: number): Promise<void> {
    try {
      const client = await listenerClient();
      for (const channel of handlers.keys()) await client.query(`LISTEN ${channel}`);
      announceGap();
    } catch {
      if (closing) return;
      const retry = setTimeout(() => void relisten(attempt + 1), Math.min(30_000, 250 * 2 ** attempt));
      retry.unref?.();
    }
  }

  async function transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(wrap(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  return {
    engine: 'postgres',
    query: base.query,
    async exec(sql) {
      await pool.query(sql);
    },
    transaction,
    // An ordinary transaction: each statement is a round trip to the server either way.
    async batch(statements) {
      if (statements.length === 0) return [];
      return transaction((tx) => runBatch(tx, statements));
    },
    async listen(channel, handler) {
      assertChannelName(channel);
      const client = await listenerClient();
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
        await client.query(`LISTEN ${channel}`);
      }
      set.add(handler);
      return async () => {
        set.delete(handler);
        if (set.size === 0 && handlers.get(channel) === set) {
          handlers.delete(channel);
          await client.query(`UNLISTEN ${channel}`).catch(() => {});
        }
      };
    },
    async notify(channel, payload) {
      assertChannelName(channel);
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      closing = true;
      listener?.release();
      listener = undefined;
      await pool.end();
    },
  };
}
