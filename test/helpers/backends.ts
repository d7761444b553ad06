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

async function openFreshPostgres(adminUrl: string): Promise<Database> {
  const name = `quiver_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const { db } = await openStore({ kind: 'postgres', url: url.toString() }, { poolSize: 4 });
  return {
    ...db,
    async close() {
      await db.close();
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
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
