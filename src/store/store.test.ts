import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from './database.ts';
import { loadMigrations, migrate, splitStatements } from './migrator.ts';
import { openStore, parseStoreLocation } from './open.ts';
import { isQuiverError } from '../core/errors.ts';

describeEachBackend('store', (backend) => {
  let db: Database;
  before(async () => {
    db = await backend.open();
  });
  after(async () => {
    await db.close();
  });

  it('applies every migration from empty and has pgvector', async () => {
    const { rows } = await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
    assert.deepEqual(rows.map((r) => r.name), loadMigrations().map((m) => m.name));
    const ext = await db.query<{ extname: string }>("SELECT extname FROM pg_extension WHERE extname = 'vector'");
    assert.equal(ext.rows.length, 1);
  });

  it('is idempotent: a second run applies nothing', async () => {
    const results = await migrate(db);
    assert.ok(results.every((r) => r.status === 'already-applied'));
  });

  it('refuses a migration edited after it was applied', async () => {
    const edited = loadMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'x'.repeat(64) } : m));
    await assert.rejects(migrate(db, edited), /edited after it was applied/);
  });

  it('creates the default workspace', async () => {
    const { rows } = await db.query<{ name: string }>('SELECT name FROM workspaces');
    assert.deepEqual(rows.map((r) => r.name), ['default']);
  });

  it('returns int8 as numbers and rolls transactions back on error', async () => {
    const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM workspaces');
    assert.equal(rows[0]?.n, 1);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO workspaces (name) VALUES ('rolled-back')");
        throw new Error('boom');
      }),
      /boom/,
    );
    const after = await db.query<{ n: number }>("SELECT count(*) AS n FROM workspaces WHERE name = 'rolled-back'");
    assert.equal(after.rows[0]?.n, 0);
  });

  it('orders vectors by cosine distance through the HNSW index', async () => {
    const tool = await db.query<{ id: string }>(
      "INSERT INTO tools (name, content_hash) VALUES ('vec-tool', repeat('a', 64)) RETURNING id",
    );
    const id = tool.rows[0]!.id;
    const vector = `[${Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0)).join(',')}]`;
    await db.query(
      "INSERT INTO tool_embeddings (tool_id, model, dimensions, embedding, content_hash) VALUES ($1, 'm', 384, $2::vector, repeat('a', 64))",
      [id, vector],
    );
    const { rows } = await db.query<{ distance: number }>(
      'SELECT embedding::vector(384) <=> $1::vector(384) AS distance FROM tool_embeddings WHERE dimensions = 384',
      [vector],
    );
    assert.ok(Math.abs(rows[0]!.distance) < 1e-6);
  });

  it('runs a batch in one transaction: results per statement, a stop at an empty guarded statement, all or nothing (issue #28)', async () => {
    await batchContract(db);
  });

  it('delivers notifications to listeners', async () => {
    const received: string[] = [];
    const unlisten = await db.listen('quiver_test_channel', (payload) => received.push(payload));
    await db.notify('quiver_test_channel', 'hello');
    for (let i = 0; i < 50 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await unlisten();
    assert.deepEqual(received, ['hello']);
  });
});

/**
 * Database.batch on any engine: `workspaces` (name unique) as the table written. Used by the
 * store suite on both backends and by the in-process PGlite below.
 */
async function batchContract(db: Database): Promise<void> {
  const names = async () => (await db.query<{ name: string }>("SELECT name FROM workspaces WHERE name LIKE 'batch-%' ORDER BY name")).rows.map((row) => row.name);
  assert.deepEqual(await db.batch([]), []);
  const results = await db.batch([
    { sql: 'INSERT INTO workspaces (name) VALUES ($1) RETURNING name', params: ['batch-a'] },
    { sql: "INSERT INTO workspaces (name) VALUES ('batch-b')" },
    { sql: "SELECT count(*)::int AS n FROM workspaces WHERE name LIKE 'batch-%'" },
  ]);
  assert.deepEqual(results.map((result) => result.rows), [[{ name: 'batch-a' }], [], [{ n: 2 }]], 'each statement sees the ones before it');
  assert.deepEqual(results.slice(0, 2).map((result) => result.affectedRows), [1, 1]);
  // A guarded statement that returns nothing ends the batch; what ran before it is committed.
  const stopped = await db.batch([
    { sql: 'INSERT INTO workspaces (name) VALUES ($1)', params: ['batch-c'] },
    { sql: 'SELECT name FROM workspaces WHERE name = $1', params: ['batch-none'], stopIfEmpty: true },
    { sql: 'INSERT INTO workspaces (name) VALUES ($1)', params: ['batch-d'] },
  ]);
  assert.equal(stopped.length, 2);
  assert.deepEqual(await names(), ['batch-a', 'batch-b', 'batch-c']);
  // A guarded statement that returns rows does not stop it.
  const went = await db.batch([
    { sql: 'SELECT name FROM workspaces WHERE name = $1', params: ['batch-a'], stopIfEmpty: true },
    { sql: 'INSERT INTO workspaces (name) VALUES ($1)', params: ['batch-e'] },
  ]);
  assert.equal(went.length, 2);
  // A failing statement (unique violation, in the middle) rolls the whole batch back, with its SQLSTATE.
  await assert.rejects(
    db.batch([
      { sql: 'INSERT INTO workspaces (name) VALUES ($1)', params: ['batch-f'] },
      { sql: 'INSERT INTO workspaces (name) VALUES ($1)', params: ['batch-a'] },
      { sql: 'INSERT INTO workspaces (name) VALUES ($1)', params: ['batch-g'] },
    ]),
    (error: Error & { code?: string }) => error.code === '23505',
  );
  assert.deepEqual(await names(), ['batch-a', 'batch-b', 'batch-c', 'batch-e']);
  // The store works on after a failed batch: statements, transactions and batches alike.
  await db.transaction(async (tx) => tx.query("INSERT INTO workspaces (name) VALUES ('batch-h')"));
  await db.batch([{ sql: "DELETE FROM workspaces WHERE name LIKE 'batch-%'" }]);
  assert.deepEqual(await names(), []);
}

describe('PGlite in this thread (the build-time template)', () => {
  it('runs a batch as the other engines do', async () => {
    const [{ PGlite }, { inProcessDatabase }] = await Promise.all([import('@electric-sql/pglite'), import('./pglite-in-process.ts')]);
    const db = inProcessDatabase(await PGlite.create());
    try {
      await db.exec('CREATE TABLE workspaces (id serial PRIMARY KEY, name text NOT NULL UNIQUE)');
      await batchContract(db);
    } finally {
      await db.close();
    }
  });
});

describe('store location', () => {
  it('parses the one setting into an engine', () => {
    assert.deepEqual(parseStoreLocation('postgres://u@h/db'), { kind: 'postgres', url: 'postgres://u@h/db' });
    assert.deepEqual(parseStoreLocation('memory://'), { kind: 'memory' });
    assert.equal(parseStoreLocation('./data').kind, 'folder');
  });

  it('splits statements without breaking quoted or dollar-quoted text', () => {
    const parts = splitStatements("SELECT 'a;b'; -- c;\nSELECT $$x;y$$; SELECT \"q;\" FROM t;");
    assert.deepEqual(parts, ["SELECT 'a;b'", 'SELECT $$x;y$$', 'SELECT "q;" FROM t']);
  });
});

describe('PGlite data folder lock', () => {
  it('refuses a second opener while the first holds the folder, keeps its data, and frees it on close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-lock-'));
    try {
      const first = await openStore({ kind: 'folder', path: dir });
      await first.db.query("INSERT INTO workspaces (name) VALUES ('kept')");
      await assert.rejects(openStore({ kind: 'folder', path: dir }), (error) => isQuiverError(error, 'data_dir_locked'));
      await first.db.close();
      const second = await openStore({ kind: 'folder', path: dir });
      const { rows } = await second.db.query<{ name: string }>("SELECT name FROM workspaces WHERE name = 'kept'");
      assert.equal(rows.length, 1);
      await second.db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes over a stale lock whose process is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-lock-'));
    try {
      writeFileSync(join(dir, 'quiver.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, startedAt: 'then' }));
      const store = await openStore({ kind: 'folder', path: dir });
      await store.db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
