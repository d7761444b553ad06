/**
 * @module test/helpers/replica-databases
 * Several connections to one fresh, migrated database, as separate replicas would hold them: on
 * PostgreSQL `count` Database objects, each with its own pool, on a scratch database dropped on
 * close; on PGlite one in-memory database handed out `count` times (it has one connection anyway).
 */
import { openStore } from '../../src/store/open.ts';
import type { Database } from '../../src/store/database.ts';
import { createScratchDatabase, type Backend } from './backends.ts';

/** The connections and how to let them go (and drop the database). */
export interface ReplicaDatabases {
  dbs: Database[];
  close(): Promise<void>;
}

/** Opens `count` connections to one fresh database on `backend`. */
export async function openReplicaDatabases(backend: Backend, count: number): Promise<ReplicaDatabases> {
  if (backend.name === 'pglite' || process.env.QUIVER_TEST_DATABASE_URL === undefined) {
    const db = await backend.open();
    return { dbs: Array.from({ length: count }, () => db), close: () => db.close() };
  }
  const scratch = await createScratchDatabase();
  const dbs: Database[] = [];
  try {
    for (let index = 0; index < count; index += 1) dbs.push((await openStore({ kind: 'postgres', url: scratch.url }, { poolSize: 2 })).db);
  } catch (error) {
    for (const db of dbs) await db.close();
    await scratch.drop();
    throw error;
  }
  return {
    dbs,
    async close() {
      for (const db of dbs) await db.close();
      await scratch.drop();
    },
  };
}
