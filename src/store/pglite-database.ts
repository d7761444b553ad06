/**
 * @module store/pglite-database
 * The embedded engine: PGlite with pgvector, in memory or in a data folder. PGlite is a
 * single connection; it serialises queries itself, so no pool semantics are assumed here.
 */
import { PGlite, types } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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
    PGlite.create({
      ...(dataDir === undefined ? {} : { dataDir }),
      ...(fromTemplate === undefined ? {} : { loadDataDir: fromTemplate }),
      extensions: { vector },
      parsers: int8Parsers,
      postgresqlconf: PGLITE_SETTINGS,
    });
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
