/**
 * The embedded store runs data statements as named prepared statements (pglite-statements.mjs,
 * issue #28): what a statement returns must not depend on whether it was prepared, including
 * after its table changed shape, past the statement cache's size, and for every parameter kind
 * the repositories pass.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from './database.ts';
import { openPGlite } from './pglite-database.ts';

describe('prepared statements of the embedded store', () => {
  let db: Database;
  before(async () => {
    db = await openPGlite();
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  });
  after(async () => {
    await db.close();
  });

  it('passes every parameter kind as query() did and parses the results the same way', async () => {
    await db.query('CREATE TABLE kinds (id int8, t text, tags text[], ids uuid[], j jsonb, b boolean, at timestamptz, raw bytea, score real, v vector(3))');
    const at = new Date('2026-11-28T08:00:00.000Z');
    const insert = `INSERT INTO kinds (id, t, tags, ids, j, b, at, raw, score, v)
      VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10::vector) RETURNING *`;
    for (let run = 0; run < 3; run++) {
      // Run three times: the first prepares, the later ones reuse the statement.
      const { rows, affectedRows } = await db.query(insert, [
        run,
        `it's "quoted" ${run}`,
        ['a', 'b,c', 'd"e'],
        ['00000000-0000-4000-8000-000000000001'],
        JSON.stringify({ nested: [1, { run }] }),
        run % 2 === 0,
        at,
        new Uint8Array([0, 1, 255]),
        0.5,
        '[1,2,3]',
      ]);
      assert.equal(affectedRows, 1);
      assert.deepEqual(rows, [
        {
          id: run,
          t: `it's "quoted" ${run}`,
          tags: ['a', 'b,c', 'd"e'],
          ids: ['00000000-0000-4000-8000-000000000001'],
          j: { nested: [1, { run }] },
          b: run % 2 === 0,
          at,
          raw: new Uint8Array([0, 1, 255]),
          score: 0.5,
          v: '[1,2,3]',
        },
      ]);
    }
    const nulls = await db.query('SELECT $1::text AS t, $2::jsonb AS j, count(*)::int AS n FROM kinds WHERE id = ANY($3::int8[])', [null, undefined, [0, 2]]);
    assert.deepEqual(nulls.rows, [{ t: null, j: null, n: 2 }]);
    const updated = await db.query('UPDATE kinds SET t = $1 WHERE id >= $2', ['changed', 1]);
    assert.equal(updated.affectedRows, 2);
  });

  it('a statement whose table changed shape answers with the new shape', async () => {
    await db.query('CREATE TABLE shape (a int)');
    await db.query('INSERT INTO shape VALUES (1)');
    assert.deepEqual((await db.query('SELECT * FROM shape')).rows, [{ a: 1 }]);
    await db.query('ALTER TABLE shape ADD COLUMN b text DEFAULT $$x$$');
    assert.deepEqual((await db.query('SELECT * FROM shape')).rows, [{ a: 1, b: 'x' }]);
    assert.deepEqual((await db.query('SELECT * FROM shape')).rows, [{ a: 1, b: 'x' }]);
    // Inside a transaction too: the stale statement fails once there (the transaction is the
    // caller's to retry), and is prepared afresh afterwards.
    await db.query('ALTER TABLE shape ADD COLUMN c int DEFAULT 3');
    await db.transaction(async (tx) => {
      await tx.query('SELECT 1');
    });
    assert.deepEqual((await db.query('SELECT * FROM shape')).rows, [{ a: 1, b: 'x', c: 3 }]);
  });

  it('keeps answering past the statement cache, and errors leave it usable', async () => {
    for (let n = 0; n < 300; n++) {
      const { rows } = await db.query(`SELECT $1::int + ${n} AS n`, [1]);
      assert.deepEqual(rows, [{ n: n + 1 }]);
    }
    // Prepared, and no more than the cache holds (the evicted ones were closed in the backend).
    const kept = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'quiver\\_%'")).rows[0]!.n;
    assert.ok(kept > 200 && kept <= 257, `${kept} prepared statements kept`);
    await assert.rejects(db.query('SELECT $1::int AS n', ['not a number']), (error: Error & { code?: string }) => error.code === 'invalid_input');
    await assert.rejects(db.query('SELEC broken'), (error: Error & { code?: string }) => error.code === '42601');
    await assert.rejects(db.query('SELECT * FROM missing_table'), (error: Error & { code?: string }) => error.code === '42P01');
    assert.deepEqual((await db.query('SELECT $1::int AS n', [5])).rows, [{ n: 5 }]);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO shape (a) VALUES ($1)', [2]);
        await tx.query('INSERT INTO shape (a) VALUES ($1)', ['x']);
      }),
      (error: Error & { code?: string }) => error.code === 'invalid_input',
    );
    assert.deepEqual((await db.query('SELECT count(*)::int AS n FROM shape')).rows, [{ n: 1 }]);
  });
});
