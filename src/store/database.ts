/**
 * @module store/database
 * The slice of a PostgreSQL client Quiver needs, implemented over PGlite (embedded, WASM)
 * and node-postgres (a real server). Every repository talks to this interface only, so one
 * SQL text runs on both engines.
 *
 * Conventions every repository follows:
 * - jsonb parameters are passed as `JSON.stringify(value)` and cast in SQL (`$1::jsonb`);
 *   node-postgres would otherwise turn a JS array into a Postgres array literal.
 * - text[] / uuid[] parameters are passed as JS arrays.
 * - int8 columns (e.g. `count(*)`) come back as JS numbers on both engines.
 * - vectors are passed and returned as their text form (`'[0.1,0.2]'`), cast with `::vector`.
 */

/** Rows returned by a query. */
export interface QueryResult<Row> {
  rows: Row[];
  /** Rows changed by INSERT / UPDATE / DELETE, when the engine reports it. */
  affectedRows: number;
}

/** Anything that runs parameterised SQL: the database itself or an open transaction. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
}

/** One statement of `Database.batch`. */
export interface BatchStatement {
  sql: string;
  params?: readonly unknown[];
  /**
   * When this statement returns no rows, the statements after it do not run (what ran is
   * committed): a write guarded in SQL (`INSERT … SELECT … WHERE NOT EXISTS …`) whose follow-up
   * only makes sense once it wrote.
   */
  stopIfEmpty?: boolean;
}

/** A notification received through LISTEN. */
export type NotificationHandler = (payload: string) => void;

/** A connection to Quiver's database. */
export interface Database extends Queryable {
  /** Which engine is behind this connection. */
  readonly engine: 'pglite' | 'postgres';
  /** Runs several statements separated by `;`, without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs `statements` in order in one transaction: committed when every one ran (or the batch
   * stopped at a `stopIfEmpty` statement), rolled back when one fails. Resolves to one result per
   * statement run. Where the engine allows it the batch is one request (the embedded store's
   * thread: one message, where `transaction` costs a message per statement plus begin and end,
   * issue #28); on PostgreSQL it is an ordinary transaction.
   */
  batch(statements: readonly BatchStatement[]): Promise<QueryResult<Record<string, unknown>>[]>;
  /**
   * Subscribes to a channel; resolves to a function that unsubscribes. When the listening
   * connection is lost (and again once it is back), every handler receives an empty payload,
   * meaning "notifications may have been missed": drop whatever they would have invalidated.
   */
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;
  /** Sends a notification on a channel (delivered to every listening process). */
  notify(channel: string, payload: string): Promise<void>;
  /** Closes the connection (and releases the data-folder lock for PGlite). */
  close(): Promise<void>;
}

/** Checks a channel name before it is spliced into LISTEN / NOTIFY (they take no parameters). */
export function assertChannelName(channel: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) {
    throw new Error(`invalid notification channel name '${channel}'`);
  }
}

/** `statements` one after the other on `tx` (an open transaction), as `Database.batch` runs them. */
export async function runBatch(tx: Queryable, statements: readonly BatchStatement[]): Promise<QueryResult<Record<string, unknown>>[]> {
  const results: QueryResult<Record<string, unknown>>[] = [];
  for (const statement of statements) {
    const result = await tx.query(statement.sql, statement.params ?? []);
    results.push(result);
    if (statement.stopIfEmpty && result.rows.length === 0) break;
  }
  return results;
}
