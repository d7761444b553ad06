// @ts-check
/**
 * The embedded database's own thread (issue #28): PGlite runs here, in a worker thread, so a
 * statement's WebAssembly never holds the server's event loop. Before, every batched write ran
 * on the main thread and stalled whatever request was waiting (a 20-row flush: 4-17 ms).
 *
 * Plain JavaScript, not TypeScript: the worker loads it by path, from the sources (tests, tsx)
 * and from dist/ alike, with no loader in between (scripts/build.mjs copies it beside the build).
 * Its client is pglite-thread.ts; the messages are typed there (PGliteRequest, PGliteReply).
 *
 * Order: requests arrive in the order the main thread sent them, and each is handed to PGlite
 * before the next message is read, so PGlite's own queue keeps that order (as in one thread).
 * A transaction holds PGlite's lock from `begin` until its `end`; statements outside it wait.
 * A `batch` is a transaction in one message: its statements, then commit, before the next.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { PGlite, types } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { createStatements } from './pglite-statements.mjs';

if (!parentPort) throw new Error('pglite-worker.mjs runs only as a worker thread');
const port = parentPort;

/** @type {import('@electric-sql/pglite').PGlite | undefined} */
let pg;
/** @type {ReturnType<typeof createStatements> | undefined} */
let statements;
/**
 * Open transactions by id: `ready` resolves to PGlite's transaction once it holds the lock;
 * `finish(true|false)` lets its callback return (commit) or throw (rollback); `outcome` settles
 * when PGlite has committed or rolled back.
 * @type {Map<number, { ready: Promise<import('@electric-sql/pglite').Transaction>, finish: (commit: boolean) => void, outcome: Promise<void> }>}
 */
const transactions = new Map();
/** @type {Map<number, Promise<() => Promise<void>>>} */
const subscriptions = new Map();
const ROLLBACK = Symbol('rollback');

// int8 (count(*), bigint ids) as JS numbers, as on node-postgres (store/database.ts).
const parsers = { [types.INT8]: (/** @type {string} */ value) => Number(value) };

port.on('message', (request) => {
  let work;
  try {
    work = run(request);
  } catch (error) {
    work = Promise.reject(error);
  }
  work.then(
    (result) => reply({ id: request.id, ok: true, result }),
    (error) => reply({ id: request.id, ok: false, error: describeError(error) }),
  );
});

/** Posts a reply; one that cannot be cloned becomes an error reply instead of ending the thread. */
function reply(message) {
  try {
    port.postMessage(message);
  } catch (error) {
    port.postMessage({ id: message.id, ok: false, error: describeError(error) });
  }
}

/** Runs one request; everything up to PGlite's call happens synchronously (see "Order" above). */
function run(request) {
  switch (request.op) {
    case 'open':
      return open(request);
    case 'query':
      return query(request);
    case 'exec':
      return database().exec(request.sql).then(() => undefined);
    case 'batch':
      return batch(request.statements);
    case 'begin':
      begin(request.tx);
      return Promise.resolve(undefined);
    case 'end':
      return end(request.tx, request.commit);
    case 'listen':
      return listen(request.subscription, request.channel);
    case 'unlisten':
      return unlisten(request.subscription);
    case 'close':
      return close();
    case 'memory':
      return Promise.resolve(memory());
    default:
      return Promise.reject(new Error(`unknown request '${request.op}'`));
  }
}

/**
 * This thread's V8 heap and PGlite's WebAssembly memory, in bytes (the memory bench reports
 * them: with the database in its own thread, process.memoryUsage() of the main thread no
 * longer shows either). `mod` is PGlite's Emscripten module, not a typed API: 0 if it moves.
 */
function memory() {
  const heap = getHeapStatistics();
  const module = /** @type {{ mod?: { HEAPU8?: Uint8Array } } | undefined} */ (/** @type {unknown} */ (pg));
  return { heapUsed: heap.used_heap_size, heapTotal: heap.total_heap_size, wasmMemory: module?.mod?.HEAPU8?.byteLength ?? 0 };
}

function database() {
  if (!pg) throw new Error('the embedded database is not open');
  return pg;
}

/** PGlite's package folder: its WebAssembly (pglite.wasm, initdb.wasm) and file-system bundle (pglite.data). */
const PGLITE_DIST = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));

/** @param {string} file */
const compile = (file) => readFile(join(PGLITE_DIST, file)).then((bytes) => WebAssembly.compile(bytes));

/** @type {Promise<WebAssembly.Module[]> | undefined} */
let compiledHere;

/**
 * PGlite's WebAssembly and file-system bundle, read (and compiled) here, in this thread (issue
 * #28): a server's main thread is busy loading its own modules while its store opens, and the
 * reads and the compile waited 0.2-0.6 s on its event loop before this thread could start
 * PostgreSQL. Modules an earlier store's thread compiled come with the request (compiled once
 * per process: the tests and benches open many stores); else they are compiled here and
 * `compiled` says so, so the caller can keep them for the next store.
 * @param {{ wasmModule?: WebAssembly.Module, initdbWasmModule?: WebAssembly.Module }} request
 */
async function readEngine(request) {
  const given = request.wasmModule !== undefined && request.initdbWasmModule !== undefined;
  if (!given && compiledHere === undefined) {
    // Kept for a second open in this thread (a template that would not start: initdb follows).
    const compiling = Promise.all([compile('pglite.wasm'), compile('initdb.wasm')]);
    compiledHere = compiling;
    compiling.catch(() => (compiledHere = compiledHere === compiling ? undefined : compiledHere));
  }
  const [[wasmModule, initdbWasmModule], bytes] = await Promise.all([
    given ? [request.wasmModule, request.initdbWasmModule] : /** @type {Promise<WebAssembly.Module[]>} */ (compiledHere),
    readFile(join(PGLITE_DIST, 'pglite.data')),
  ]);
  // A file read whole gets a buffer of its own (not Node's shared pool); copied if it ever did not.
  const fsBundle = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return { wasmModule, initdbWasmModule, fsBundle: /** @type {ArrayBuffer} */ (fsBundle), compiled: !given };
}

/**
 * The bundle as the Blob-like PGlite reads: the buffer itself the first time, a copy after (a
 * new store's initdb starts a second PGlite from the same options; its files must not be views
 * of the buffer the first one's files are).
 * @param {ArrayBuffer} bundle
 */
function bundleOnce(bundle) {
  let given = false;
  const arrayBuffer = async () => {
    if (given) return bundle.slice(0);
    given = true;
    return bundle;
  };
  return /** @type {Blob} */ (/** @type {unknown} */ ({ arrayBuffer }));
}

/**
 * Opens PGlite; answers with the WebAssembly modules it compiled for it (`engine`), if it had to.
 * Its options object stays reachable for the life of the store (its Emscripten module's
 * callbacks close over it), so what is only needed to start (the template's tar, the
 * file-system bundle) is removed from it once PGlite is up. The bundle is handed over as the
 * ArrayBuffer it was read into: PGlite asks for `fsBundle.arrayBuffer()` and its file system
 * keeps views of that buffer, so a Blob would have been a second copy held beside it (issue #28).
 */
async function open(request) {
  if (pg) throw new Error('the embedded database is already open');
  const engine = await readEngine(request);
  /** @type {import('@electric-sql/pglite').PGliteOptions} */
  const options = {
    ...(request.dataDir === undefined ? {} : { dataDir: request.dataDir }),
    ...(request.template === undefined ? {} : { loadDataDir: new Blob([request.template], { type: 'application/x-tar' }) }),
    pgliteWasmModule: engine.wasmModule,
    initdbWasmModule: engine.initdbWasmModule,
    fsBundle: bundleOnce(engine.fsBundle),
    extensions: { vector },
    parsers,
    postgresqlconf: request.settings,
  };
  request.template = undefined;
  pg = await PGlite.create(options);
  delete options.loadDataDir;
  delete options.fsBundle;
  statements = createStatements(pg);
  return engine.compiled ? { engine: { wasmModule: engine.wasmModule, initdbWasmModule: engine.initdbWasmModule } } : {};
}

async function query(request) {
  database();
  const run = /** @type {ReturnType<typeof createStatements>} */ (statements).query;
  if (request.tx === undefined) return run(request.sql, request.params);
  const transaction = transactions.get(request.tx);
  if (!transaction) throw new Error('this transaction is over');
  return run(request.sql, request.params, await transaction.ready);
}

/**
 * A batch (Database.batch): its statements in order in one PGlite transaction, answered once;
 * a failing statement rolls the whole batch back, a `stopIfEmpty` statement that returns no
 * rows ends it (committed). PGlite's transaction is asked for synchronously, like `begin`'s.
 * @param {{ sql: string, params: readonly unknown[], stopIfEmpty?: boolean }[]} list
 */
function batch(list) {
  const db = database();
  const run = /** @type {ReturnType<typeof createStatements>} */ (statements).query;
  return db.transaction(async (tx) => {
    const results = [];
    for (const statement of list) {
      const result = await run(statement.sql, statement.params, tx);
      results.push(result);
      if (statement.stopIfEmpty && result.rows.length === 0) break;
    }
    return results;
  });
}

function begin(id) {
  const db = database();
  /** @type {(commit: boolean) => void} */
  let finish = () => {};
  const finished = new Promise((resolve) => (finish = resolve));
  /** @type {(tx: import('@electric-sql/pglite').Transaction) => void} */
  let started = () => {};
  /** @type {(error: unknown) => void} */
  let failed = () => {};
  const ready = new Promise((resolve, reject) => {
    started = resolve;
    failed = reject;
  });
  ready.catch(() => {});
  const outcome = db
    .transaction(async (tx) => {
      started(tx);
      if (!(await finished)) throw ROLLBACK;
    })
    .then(
      () => undefined,
      (error) => {
        failed(error);
        if (error !== ROLLBACK) throw error;
      },
    );
  outcome.catch(() => {});
  transactions.set(id, { ready, finish, outcome });
}

async function end(id, commit) {
  const transaction = transactions.get(id);
  if (!transaction) throw new Error('this transaction is over');
  transactions.delete(id);
  transaction.finish(commit);
  await transaction.outcome;
  return undefined;
}

async function listen(subscription, channel) {
  const unsubscribe = database().listen(channel, (payload) => port.postMessage({ notification: subscription, payload }));
  subscriptions.set(subscription, unsubscribe);
  await unsubscribe;
  return undefined;
}

async function unlisten(subscription) {
  const unsubscribe = subscriptions.get(subscription);
  subscriptions.delete(subscription);
  if (unsubscribe && pg && !pg.closed) await (await unsubscribe)();
  return undefined;
}

async function close() {
  const db = pg;
  pg = undefined;
  statements = undefined;
  if (db && !db.closed) await db.close();
  return undefined;
}

/**
 * An error as plain data: its message, name and the engine's fields (SQLSTATE `code`, detail,
 * constraint…). Only strings and numbers cross: a statement's parameters stay in this thread.
 */
function describeError(error) {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  /** @type {Record<string, string | number>} */
  const fields = {};
  for (const [key, value] of Object.entries(error)) {
    if (key !== 'params' && (typeof value === 'string' || typeof value === 'number')) fields[key] = value;
  }
  return { name: error.name, message: error.message, fields };
}
