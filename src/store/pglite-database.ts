/**
 * @module store/pglite-database
 * The embedded engine: PGlite with pgvector, in memory or in a data folder. PGlite is a
 * single connection; it serialises queries itself, so no pool semantics are assumed here.
 */
import { PGlite, types } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { Database, NotificationHandler, QueryResult, Queryable } from './database.ts';
import { assertChannelName } from './database.ts';
import { mapDatabaseError } from './database-errors.ts';
import { migrate, type Migration } from './migrator.ts';
import { clearNewDataDir, createTemplate, extractTemplate, isNewDataDir, loadTemplate, type TemplateManifest } from './pglite-template.ts';

const int8Parsers = {
  [types.INT8]: (value: string) => Number(value),
};

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

/**
 * PostgreSQL settings for the embedded engine. PGlite keeps its shared buffers inside the
 * WASM heap, which never shrinks, and the pages it reads come from the OS page cache anyway
 * (one process, no other backend to share them with). The server default (128 MB) cost ~120 MB
 * of RSS; 32 MB still cost 32 MB more than 8 MB once the pages are touched (issue #28: opening a
 * warm store and two queries, peak 200 vs 232 MiB, CPU 0.93×, medians of 5 interleaved runs).
 * Measured by `quiver bench` (memory section).
 */
export const PGLITE_SETTINGS = ['shared_buffers = 8MB'];

/**
 * PGlite's PostgreSQL is 9 MB of WebAssembly. V8 compiles all of it with Liftoff, then compiles
 * the hot functions again with TurboFan and keeps both: on a warm store the optimised copies
 * cost 40–60 MB of RSS more than Liftoff alone (issue #28: opening a store and a query, 121–127
 * vs 167–169 MB). The price is work done inside PostgreSQL: a CPU-bound query (md5 over 300k
 * rows) takes 1.7–2.1× the CPU time. Small queries, most of what Quiver sends, cost the same
 * (8,000 after warm-up: medians 2.67 vs 2.57 s; their time is the protocol in JavaScript).
 * Medians of 3 interleaved runs, Node 20, load average 30 (shared machine). The flag is read when a
 * module is compiled, so it is set only around PGlite's compilation and put back after
 * (other WebAssembly in the process keeps V8's tiering).
 */
export const PGLITE_V8_FLAG = '--liftoff-only';

/** PGlite compilations under way: the flag goes back when the last one is done. */
let compiling = 0;

async function withLiftoffOnly<T>(work: () => Promise<T>): Promise<T> {
  if (compiling++ === 0) setFlagsFromString(PGLITE_V8_FLAG);
  try {
    return await work();
  } finally {
    if (--compiling === 0) setFlagsFromString('--no-liftoff-only');
  }
}

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
}

/** Opens PGlite with pgvector. `dataDir` undefined means in memory. */
export async function openPGlite(options: OpenPGliteOptions = {}): Promise<Database> {
  const { dataDir } = options;
  const existing = dataDir !== undefined && existsSync(join(dataDir, 'PG_VERSION'));
  let origin: PGliteOrigin = existing ? 'existing' : 'initdb';
  let loadDataDir: Blob | undefined;
  if (!existing && options.template !== undefined) {
    const template = loadTemplate(options.template.migrations, options.template.directories);
    if (template !== undefined) {
      if (dataDir === undefined) {
        // In memory there is no folder to unpack into: PGlite loads the tar into its MEMFS.
        loadDataDir = new Blob([template.tar], { type: 'application/x-tar' });
        origin = 'template';
      } else if (isNewDataDir(dataDir) && extractTemplate(template, dataDir)) {
        origin = 'template';
      }
    }
  }
  const create = (fromTemplate: Blob | undefined) =>
    withLiftoffOnly(() => PGlite.create({
      ...(dataDir === undefined ? {} : { dataDir }),
      ...(fromTemplate === undefined ? {} : { loadDataDir: fromTemplate }),
      extensions: { vector },
      parsers: int8Parsers,
      postgresqlconf: PGLITE_SETTINGS,
    }));
  let pg: PGlite;
  try {
    pg = await create(loadDataDir);
  } catch (error) {
    if (origin !== 'template') throw error;
    // The template is an optimisation: if PostgreSQL will not start from it, start over with initdb.
    if (dataDir !== undefined) clearNewDataDir(dataDir);
    origin = 'initdb';
    pg = await create(undefined);
  }
  options.onOrigin?.(origin);
  return asDatabase(pg, options.onClose);
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
      await migrate(asDatabase(pg), migrations);
    },
  });
}

function asDatabase(pg: PGlite, onClose?: () => void): Database {
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
        onClose?.();
      }
    },
  };
}
