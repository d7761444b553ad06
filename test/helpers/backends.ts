/**
 * @module test/helpers/backends
 * One test body, every database: `describeEachBackend` runs a suite on PGlite (always) and
 * on PostgreSQL when QUIVER_TEST_DATABASE_URL is set. Under CI the PostgreSQL run is
 * mandatory: a missing URL fails instead of skipping. Each `open()` gives a fresh, migrated
 * database (a new in-memory PGlite, or a new PostgreSQL database dropped on close).
 */
import { describe } from 'node:test';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore } from '../../src/store/open.ts';
import type { Database } from '../../src/store/database.ts';

export type BackendName = 'pglite' | 'postgres';

export interface Backend {
  name: BackendName;
  /** Why the backend is skipped here, if it is. */
  skip: string | undefined;
  /** A fresh migrated database; closing it throws the data away. */
  open(): Promise<Database>;
}

const postgresUrl = process.env.QUIVER_TEST_DATABASE_URL;

async function runAdmin(adminUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** An empty PostgreSQL database of its own, for code or a process that migrates it itself. */
export interface ScratchDatabase {
  name: string;
  url: string;
  /** Drops it, closing whatever connections are left. */
  drop(): Promise<void>;
}

/** Creates an empty PostgreSQL database next to the one `adminUrl` names (QUIVER_TEST_DATABASE_URL by default). */
export async function createScratchDatabase(adminUrl: string | undefined = postgresUrl): Promise<ScratchDatabase> {
  if (!adminUrl) throw new Error('QUIVER_TEST_DATABASE_URL is not set: a PostgreSQL test needs it');
  const name = `quiver_t_${randomBytes(6).toString('hex')}`;
  await runAdmin(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => runAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * What a real `quiver` process needs to run on `backend`: on PostgreSQL, QUIVER_DATABASE_URL of
 * a scratch database (dropped by `drop`); on PGlite nothing, the process's data folder serves.
 */
export async function processStore(backend: Backend): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (backend.name === 'pglite') return { env: {}, drop: async () => {} };
  const scratch = await createScratchDatabase();
  return { env: { QUIVER_DATABASE_URL: scratch.url }, drop: scratch.drop };
}

async function openFreshPostgres(adminUrl: string): Promise<Database> {
  const scratch = await createScratchDatabase(adminUrl);
  const { db } = await openStore({ kind: 'postgres', url: scratch.url }, { poolSize: 4 });
  return {
    ...db,
    async close() {
      await db.close();
      await scratch.drop();
    },
  };
}

/** The backends this run covers. */
export function backends(): Backend[] {
  const postgresSkip = postgresUrl
    ? undefined
    : process.env.CI === 'true'
      ? undefined
      : 'QUIVER_TEST_DATABASE_URL not set (PostgreSQL tests skipped; PGlite ran)';
  return [
    { name: 'pglite', skip: undefined, open: async () => (await openStore({ kind: 'memory' })).db },
    {
      name: 'postgres',
      skip: postgresSkip,
      open: async () => {
        if (!postgresUrl) throw new Error('CI=true but QUIVER_TEST_DATABASE_URL is not set: PostgreSQL tests must run in CI');
        return openFreshPostgres(postgresUrl);
      },
    },
  ];
}

/** Registers `body` once per backend, as `title [pglite]` and `title [postgres]`. */
export function describeEachBackend(title: string, body: (backend: Backend) => void): void {
  for (const backend of backends()) {
    describe(`${title} [${backend.name}]`, { skip: backend.skip ?? false }, () => body(backend));
  }
}
