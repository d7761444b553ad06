// @ts-check
/**
 * Named prepared statements for the embedded database's thread (issue #28). PGlite's `query()`
 * sends Parse, Describe, Bind, Describe, Execute and Sync one by one into WebAssembly, unnamed,
 * so every statement is parsed and planned afresh: about half of PGlite's time per statement
 * under the gateway load (docs/scale-out.md). Here a statement text is parsed once under a name;
 * each run is one call into WebAssembly (Bind, Describe, Execute, Sync in one buffer), and
 * PostgreSQL may keep a generic plan. One-row SELECT: 0.73 -> 0.19 ms (micro-measure, load ~5).
 *
 * Only data statements (SELECT, INSERT, UPDATE, DELETE, WITH) are prepared; anything else (DDL,
 * SET, a transaction verb) goes through `query()`. At most MAX_STATEMENTS are kept (least
 * recently used closed first), so statement texts built per call cannot grow the backend.
 * Parameters are serialised exactly as `query()` does (PGlite's serialisers by parameter type,
 * else `toString()`), and results parsed by PGlite's own parser with the instance's parsers.
 */
import { parse, protocol } from '@electric-sql/pglite';

const { serialize } = protocol;
const MAX_STATEMENTS = 256;
const DATA_STATEMENT = /^\s*(select|insert|update|delete|with)\b/i;
// A prepared statement that no longer fits its tables (0A000: cached plan must not change result
// type) or that the backend no longer knows (26000): forgotten, and outside a transaction re-run
// unnamed once.
const STALE_STATEMENT = new Set(['0A000', '26000']);
/** @param {unknown} error */
const isStale = (error) => STALE_STATEMENT.has(/** @type {{ code?: string }} */ (error)?.code ?? '');

/** A PGlite result as the Database contract returns it. @param {{ rows?: unknown[], affectedRows?: number } | undefined} result */
const asResult = (result) => ({ rows: result?.rows ?? [], affectedRows: result?.affectedRows ?? 0 });

/** @param {Uint8Array[]} parts */
function concat(parts) {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Statements of one PGlite instance.
 * @param {import('@electric-sql/pglite').PGlite} pg
 */
export function createStatements(pg) {
  /** @type {Map<string, { name: string, paramTypes: number[] }>} statement text -> its name and parameter types (Map order = recency) */
  const prepared = new Map();
  /** @type {Uint8Array[]} Close messages of evicted statements, sent with the next Parse. */
  let toClose = [];
  let nextName = 1;
  /** @type {any} PGlite's protocol calls and locks (public methods, not in its typings) */
  const engine = pg;

  /** @param {Uint8Array[]} messages */
  const send = (messages) => engine.execProtocolStream(concat(messages), { syncToFs: false });

  /** @param {string} sql */
  async function prepare(sql) {
    const name = `quiver_${nextName++}`;
    const closing = toClose;
    toClose = [];
    const results = await send([...closing, serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()]);
    const statement = { name, paramTypes: parse.parseDescribeStatementResults(results) };
    prepared.set(sql, statement);
    if (prepared.size > MAX_STATEMENTS) {
      const [oldest, { name: evicted }] = prepared.entries().next().value;
      prepared.delete(oldest);
      toClose.push(serialize.close({ type: 'S', name: evicted }));
    }
    return statement;
  }

  /**
   * Runs `sql` as a named statement; PGlite's lock must already be held.
   * @param {string} sql
   * @param {readonly unknown[]} params
   */
  async function execute(sql, params) {
    let statement = prepared.get(sql);
    if (statement) {
      prepared.delete(sql); // re-inserted below: most recently used last
      prepared.set(sql, statement);
    } else statement = await prepare(sql);
    const { paramTypes } = statement;
    const values = params.map((value, index) => {
      if (value === null || value === undefined) return null;
      const serializer = engine.serializers[paramTypes[index]];
      return serializer ? serializer(value) : String(value);
    });
    try {
      const results = await send([serialize.bind({ statement: statement.name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]);
      return asResult(parse.parseResults(results, engine.parsers)[0]);
    } catch (error) {
      if (isStale(error)) {
        prepared.delete(sql);
        toClose.push(serialize.close({ type: 'S', name: statement.name }));
      }
      throw error;
    }
  }

  /**
   * Runs one statement: named when it is a data statement, otherwise through `query()`.
   * `tx` is the open PGlite transaction the statement belongs to, if any (it holds the lock).
   * @param {string} sql
   * @param {readonly unknown[]} params
   * @param {import('@electric-sql/pglite').Transaction} [tx]
   */
  async function query(sql, params, tx) {
    if (!DATA_STATEMENT.test(sql)) return asResult(await (tx ?? pg).query(sql, [...params]));
    if (pg.closed) throw new Error('PGlite is closed');
    if (tx) return engine._runExclusiveQuery(() => execute(sql, params));
    try {
      return await engine._runExclusiveTransaction(() => engine._runExclusiveQuery(() => execute(sql, params)));
    } catch (error) {
      if (!isStale(error)) throw error;
      return asResult(await pg.query(sql, [...params]));
    } finally {
      // As query() does after a statement outside a transaction (a no-op on PGlite's node and memory file systems).
      if (!pg.closed) await pg.syncToFs();
    }
  }

  return { query };
}
