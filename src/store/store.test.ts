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

  it('delivers notifications to listeners', async () => {
    const received: string[] = [];
    const unlisten = await db.listen('quiver_test_channel', (payload) => received.push(payload));
    await db.notify('quiver_test_channel', 'hello');
    for (let i = 0; i < 50 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await unlisten();
    assert.deepEqual(received, ['hello']);
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
