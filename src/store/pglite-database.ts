/**
 * @module store/pglite-database
 * The embedded engine: PGlite with pgvector, in memory or in a data folder. PGlite is a
 * single connection; it serialises queries itself, so no pool semantics are assumed here.
 * It runs in a worker thread of its own (pglite-worker.mjs, issue #28): the WebAssembly of a
 * statement (a batched write took 4-17 ms) no longer holds the event loop that answers requests.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, NotificationHandler, QueryResult } from './database.ts';
import { assertChannelName } from './database.ts';
import type { Migration } from './migrator.ts';
import { PGliteThread, type CompiledEngine, type PGliteOpenReply, type PGliteRequest, type PGliteThreadMemory } from './pglite-thread.ts';
import { clearNewDataDir, createTemplate, extractTemplate, isNewDataDir, loadTemplate, type TemplateManifest } from './pglite-template.ts';

/**
 * PostgreSQL settings for the embedded engine. PGlite keeps its shared buffers inside the
 * WASM heap, which never shrinks, and the pages it reads come from the OS page cache anyway
 * (one process, no other backend to share them with). The server default (128 MB) cost ~120 MB
 * of RSS; 32 MB still cost 32 MB more than 8 MB once the pages are touched (issue #28: opening a
 * warm store and two queries, peak 200 vs 232 MiB, CPU 0.93×, medians of 5 interleaved runs).
 * 8 MB were all touched by the time a server is ready; 2 MB (256 pages, ample for the one
 * backend) left the WebAssembly memory of an idle `quiver serve` 6 MB smaller (22.1 -> 16.1 MB
 * resident; measurements in docs/engineering.md, "The embedded store's thread", Memory).
 * Measured by `quiver bench` (memory section).
 */
export const PGLITE_SETTINGS = ['shared_buffers = 2MB'];

/*
 * Tried and reverted (issue #28): compiling PGlite's 9 MB of WebAssembly with V8's Liftoff only
 * (`--liftoff-only` set around PGlite.create) saves the TurboFan copies of its hot functions,
 * idle `quiver serve` 210 -> 158 MB RSS (medians of 3 interleaved memory-bench pairs), but every
 * query then runs in baseline code: the 150-session HTTP load bench (20 s, PGlite) served 80-85
 * searches per server CPU-second with it vs 100-110 without (A B A B, load 3-4): a fifth of the
 * throughput for a memory target that stays missed either way (158 vs 150 MB).
 */

/** How a PGlite store came to be: made from the build-time template, by initdb, or found. */
export type PGliteOrigin = 'template' | 'initdb' | 'existing';

export interface OpenPGliteOptions {
  /** The data folder; undefined means in memory. */
  dataDir?: string;
  onClose?: () => void;
  /**
   * Start a NEW store from the build-time template (see pglite-template.ts) when one matches
   * exactly these migrations; otherwise, or for an existing folder, nothing changes. Only
   * for callers that migrate to the same list right after (openStore does).
   */
  template?: { migrations: Migration[]; directories?: URL[] };
  /** Told how the store came to be (tests and diagnostics). */
  onOrigin?: (origin: PGliteOrigin) => void;
  /**
   * Called once the store's thread has been asked to open (it reads, compiles and starts PGlite
   * on its own from then on): a caller can load its own modules meanwhile (issue #28).
   */
  onStarted?: () => void;
}

/** Opens PGlite with pgvector. `dataDir` undefined means in memory. */
export async function openPGlite(options: OpenPGliteOptions = {}): Promise<Database> {
  const { dataDir } = options;
  const existing = dataDir !== undefined && existsSync(join(dataDir, 'PG_VERSION'));
  let origin: PGliteOrigin = existing ? 'existing' : 'initdb';
  let loadDataDir: Uint8Array | undefined;
  if (!existing && options.template !== undefined) {
    const template = loadTemplate(options.template.migrations, options.template.directories);
    if (template !== undefined) {
      if (dataDir === undefined) {
        // In memory there is no folder to unpack into: PGlite loads the tar into its MEMFS.
        loadDataDir = template.tar;
        origin = 'template';
      } else if (isNewDataDir(dataDir) && extractTemplate(template, dataDir)) {
        origin = 'template';
      }
    }
  }
  const thread = new PGliteThread();
  const open = (template: Uint8Array | undefined) =>
    openThread(thread, { op: 'open', ...(dataDir === undefined ? {} : { dataDir }), ...(template === undefined ? {} : { template }), settings: PGLITE_SETTINGS });
  try {
    try {
      const opening = open(loadDataDir);
      options.onStarted?.();
      await opening;
    } catch (error) {
      if (origin !== 'template') throw error;
      // The template is an optimisation: if PostgreSQL will not start from it, start over with initdb.
      if (dataDir !== undefined) clearNewDataDir(dataDir);
      origin = 'initdb';
      await open(undefined);
    }
  } catch (error) {
    await thread.terminate();
    throw error;
  }
  options.onOrigin?.(origin);
  const db = threadDatabase(thread, options.onClose);
  threads.set(db, thread);
  return db;
}

/**
 * PGlite's WebAssembly as the first store's thread of this process compiled it (undefined while
 * none has, or after it failed): handed to every later store's thread, since a compiled module
 * crosses to a worker without compiling again. Each thread compiling its own copy made a process
 * that opens many stores (the test suite, the benches) pay the compile per store. A store opening
 * while another thread compiles waits for those modules rather than compiling its own.
 */
let compiled: Promise<CompiledEngine | undefined> | undefined;

/**
 * Sends `open` to `thread` synchronously when no compile is under way or known (the thread then
 * reads and compiles PGlite itself, off this thread's event loop: issue #28), else once the
 * modules are known, with them; keeps the modules the thread compiled.
 */
function openThread(thread: PGliteThread, request: Extract<PGliteRequest, { op: 'open' }>): Promise<unknown> {
  if (compiled !== undefined) {
    const known = compiled;
    return known.then((engine) => (engine !== undefined ? thread.request({ ...request, ...engine }) : openThread(thread, request)));
  }
  const opening = thread.request<PGliteOpenReply>(request);
  const mine = opening.then(
    (reply) => reply.engine,
    () => undefined,
  );
  compiled = mine;
  void mine.then((engine) => {
    if (engine === undefined && compiled === mine) compiled = undefined;
  });
  return opening;
}

/**
 * Writes the template used by openPGlite for new stores into `directory` (scripts/build.mjs):
 * an in-memory PGlite, exactly as openStore leaves a new store, dumped.
 */
export async function buildPGliteTemplate(directory: string, migrations: Migration[]): Promise<TemplateManifest> {
  return createTemplate({
    directory,
    migrations,
    settings: PGLITE_SETTINGS,
    migrate: async (pg) => {
      const [{ inProcessDatabase }, { migrate }] = await Promise.all([import('./pglite-in-process.ts'), import('./migrator.ts')]);
      await migrate(inProcessDatabase(pg), migrations);
    },
  });
}

/** Each embedded store's thread, for pgliteMemory. */
const threads = new WeakMap<Database, PGliteThread>();

/**
 * The memory of an embedded store's thread (its V8 heap, PGlite's WebAssembly memory);
 * undefined for any other Database. The process's own figures no longer include the thread's
 * heap, so the memory bench reports both.
 */
export async function pgliteMemory(db: Database): Promise<PGliteThreadMemory | undefined> {
  const thread = threads.get(db);
  return thread ? thread.request<PGliteThreadMemory>({ op: 'memory' }) : undefined;
}

/** The Database over a PGlite worker thread: every call is one request (a transaction, a few; a batch, one). */
function threadDatabase(thread: PGliteThread, onClose?: () => void): Database {
  let closed = false;
  let nextTransaction = 1;
  let nextSubscription = 1;
  const query = <Row>(sql: string, params: readonly unknown[] = [], tx?: number) =>
    thread.request<QueryResult<Row>>({ op: 'query', sql, params, ...(tx === undefined ? {} : { tx }) });
  return {
    engine: 'pglite',
    query: (sql, params) => query(sql, params),
    async exec(sql) {
      await thread.request({ op: 'exec', sql });
    },
    async transaction(work) {
      const tx = nextTransaction++;
      await thread.request({ op: 'begin', tx });
      let result;
      try {
        result = await work({ query: (sql, params) => query(sql, params, tx) });
      } catch (error) {
        // Rolled back; the work's error is what the caller needs, not a rollback's.
        await thread.request({ op: 'end', tx, commit: false }).catch(() => {});
        throw error;
      }
      await thread.request({ op: 'end', tx, commit: true });
      return result;
    },
    // One message: the worker runs the statements in one PGlite transaction (pglite-worker.mjs).
    async batch(statements) {
      if (statements.length === 0) return [];
      return thread.request<QueryResult<Record<string, unknown>>[]>({
        op: 'batch',
        statements: statements.map((statement) => ({ sql: statement.sql, params: statement.params ?? [], ...(statement.stopIfEmpty ? { stopIfEmpty: true } : {}) })),
      });
    },
    async listen(channel: string, handler: NotificationHandler) {
      assertChannelName(channel);
      const subscription = nextSubscription++;
      thread.onNotification(subscription, handler);
      try {
        await thread.request({ op: 'listen', subscription, channel });
      } catch (error) {
        thread.dropNotifications(subscription);
        throw error;
      }
      return async () => {
        thread.dropNotifications(subscription);
        if (!closed) await thread.request({ op: 'unlisten', subscription });
      };
    },
    async notify(channel, payload) {
      assertChannelName(channel);
      await query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await thread.request({ op: 'close' });
      } finally {
        await thread.terminate();
        onClose?.();
      }
    },
  };
}
