/**
 * Key revocation reaches every replica at once (issue #18, finding 6): a key cached by one
 * process stops working there as soon as another process revokes it, long before the cache
 * TTL; and a process that cannot hear revocations never trusts its cache.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import { openStore } from '../store/open.ts';
import type { Database } from '../store/database.ts';
import { createApiKeyService, parseKeyChange, type ApiKeyService } from './api-keys.ts';
import { isQuiverError } from '../core/errors.ts';

/** A second connection to the same database: another replica on PostgreSQL, the same process on PGlite. */
async function secondConnection(db: Database): Promise<{ db: Database; close(): Promise<void> }> {
  if (db.engine === 'pglite') return { db, close: async () => {} };
  const { rows } = await db.query<{ name: string }>('SELECT current_database() AS name');
  const url = new URL(process.env.QUIVER_TEST_DATABASE_URL!);
  url.pathname = `/${rows[0]!.name}`;
  const second = (await openStore({ kind: 'postgres', url: url.toString() }, { migrate: false, poolSize: 2 })).db;
  return { db: second, close: () => second.close() };
}

async function rejects(service: ApiKeyService, key: string): Promise<boolean> {
  try {
    await service.authenticate(key);
    return false;
  } catch (error) {
    assert.ok(isQuiverError(error) && error.code === 'unauthorized', `unexpected ${String(error)}`);
    return true;
  }
}

/** Waits for `condition` on events, polling briefly; fails after `ms`. */
async function until(condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeEachBackend('API key revocation across replicas', (backend) => {
  let db: Database;
  let other: { db: Database; close(): Promise<void> };
  let replicaA: ApiKeyService;
  let replicaB: ApiKeyService;

  before(async () => {
    db = await backend.open();
    other = await secondConnection(db);
    // An hour of cache: only the notification can end a cached key's life within this test.
    replicaA = createApiKeyService({ db, cacheTtlMs: 3_600_000 });
    replicaB = createApiKeyService({ db: other.db, cacheTtlMs: 3_600_000 });
    await Promise.all([replicaA.ready(), replicaB.ready()]);
  });

  after(async () => {
    await replicaA.close();
    await replicaB.close();
    await other.close();
    await db.close();
  });

  it('a key revoked on one replica is refused by another that had it cached', async () => {
    const { key, record } = await replicaA.create({ name: 'tenant', scopes: ['select'], orgId: 'org-a' });
    const control = await replicaA.create({ name: 'control', scopes: ['select'] });
    assert.equal((await replicaB.authenticate(key)).keyId, record.id);
    assert.equal((await replicaB.authenticate(control.key)).keyId, control.record.id);
    // B really serves from its cache: a revocation written without a notification is not seen
    // there (the stale window finding 6 was about), so what ends `key` below is the notification.
    await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [control.record.id]);
    assert.equal((await replicaB.authenticate(control.key)).keyId, control.record.id);

    await replicaA.revoke(record.id);
    assert.ok(await rejects(replicaA, key), 'the revoking replica refuses at once');
    await until(() => rejects(replicaB, key));
  });

  it('revoking one key leaves other cached keys working', async () => {
    const first = await replicaA.create({ name: 'first', scopes: ['read'] });
    const second = await replicaA.create({ name: 'second', scopes: ['read'] });
    await replicaB.authenticate(first.key);
    await replicaB.authenticate(second.key);
    await replicaA.revoke(first.record.id);
    await until(() => rejects(replicaB, first.key));
    assert.equal((await replicaB.authenticate(second.key)).keyId, second.record.id);
  });

  if (backend.name === 'postgres') {
    it('a lost LISTEN connection drops the cache, and revocations are heard again once it is back', async () => {
      const stale = await replicaA.create({ name: 'stale', scopes: ['read'] });
      await replicaB.authenticate(stale.key);
      await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [stale.record.id]);
      assert.equal((await replicaB.authenticate(stale.key)).keyId, stale.record.id, 'cached before the connection is lost');
      const { rows } = await db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
      );
      assert.ok(rows.length > 0, 'found the listening connections');
      for (const { pid } of rows) await db.query('SELECT pg_terminate_backend($1)', [pid]);
      await until(() => rejects(replicaB, stale.key));

      const later = await replicaA.create({ name: 'later', scopes: ['read'] });
      // Once B listens again its cache is back on; then a revocation through A must reach it.
      await until(async () => {
        await replicaB.authenticate(later.key);
        const { rows: listening } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
        );
        return listening[0]!.n >= 2;
      });
      await replicaA.revoke(later.record.id);
      await until(() => rejects(replicaB, later.key));
    });
  }

  it('refuses unknown and malformed key ids with not_found, never a database error', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', 'a\u0000b', '']) {
      await assert.rejects(replicaA.revoke(id), (error: unknown) => isQuiverError(error) && error.code === 'not_found');
    }
  });

  it('without a live subscription the cache is not used (fail closed)', async () => {
    const { key, record } = await replicaA.create({ name: 'uncached', scopes: ['read'] });
    const closedService = createApiKeyService({ db: other.db, cacheTtlMs: 3_600_000 });
    await closedService.close();
    assert.equal((await closedService.authenticate(key)).keyId, record.id);
    // Revoke straight in the database: no notification reaches a closed service, yet it refuses.
    await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [record.id]);
    assert.ok(await rejects(closedService, key));
  });
});

it('reads key-change notifications; anything unreadable means "drop every cached key"', () => {
  assert.equal(parseKeyChange(JSON.stringify({ keyId: 'k1' })), 'k1');
  assert.equal(parseKeyChange(''), undefined);
  assert.equal(parseKeyChange('{"other":1}'), undefined);
  assert.equal(parseKeyChange('not json'), undefined);
});

describeEachBackend('listening from several services at once', (backend) => {
  it('shares one listening connection, so closing the database does not hang', { timeout: 20_000 }, async () => {
    const db = await backend.open();
    // Both subscribe at the same moment, as createApp's key service and selection engine do.
    const first = createApiKeyService({ db });
    const second = createApiKeyService({ db });
    await Promise.all([first.ready(), second.ready()]);
    await first.close();
    await second.close();
    await db.close();
  });
});
