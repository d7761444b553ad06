/**
 * QUIVER_DATABASE_POOL_SIZE (issue #16, docs/scale-out.md "10 and 100 replicas"): a replica on
 * PostgreSQL never holds more backends than its pool, the LISTEN connection included, counted by
 * the server itself in pg_stat_activity while a real app runs more queries at once than that.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { skipUnless } from '../helpers/requirements.ts';

const adminUrl = process.env.QUIVER_TEST_DATABASE_URL;

describe('QUIVER_DATABASE_POOL_SIZE bounds a replica\'s PostgreSQL connections', { skip: skipUnless(!adminUrl && 'QUIVER_TEST_DATABASE_URL is not set') }, () => {
  it('a pool of 3 opens at most 3 backends under 30 concurrent queries, and the queries all finish', async () => {
    const database = `quiver_t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(adminUrl!);
    url.pathname = `/${database}`;
    try {
      const app = await createApp(loadConfig({ HOME: '/tmp', QUIVER_DATABASE_URL: url.toString(), QUIVER_DATABASE_POOL_SIZE: '3', QUIVER_LOG_LEVEL: 'silent' }));
      try {
        const backends = async () => Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [database])).rows[0]!.n);
        let peak = 0;
        const sampler = setInterval(() => void backends().then((n) => (peak = Math.max(peak, n))), 5);
        const results = await Promise.all(Array.from({ length: 30 }, (_, index) => app.db.query<{ i: number }>('SELECT $1::int AS i, pg_sleep(0.02)', [index])));
        clearInterval(sampler);
        peak = Math.max(peak, await backends());
        assert.deepEqual(results.map((result) => result.rows[0]!.i), Array.from({ length: 30 }, (_, index) => index));
        assert.ok(peak >= 2, `the pool was used (peak ${peak})`);
        assert.ok(peak <= 3, `at most the pool's 3 backends, saw ${peak}`);
      } finally {
        await app.close();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('is validated: at least 2 (one connection stays on LISTEN)', () => {
    assert.equal(loadConfig({ HOME: '/tmp' }).databasePoolSize, 10);
    assert.throws(() => loadConfig({ HOME: '/tmp', QUIVER_DATABASE_POOL_SIZE: '1' }), /QUIVER_DATABASE_POOL_SIZE/);
  });
});
