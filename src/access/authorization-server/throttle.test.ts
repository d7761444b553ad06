/**
 * The sign-in throttle of the built-in authorization server (issue #27) on PGlite and
 * PostgreSQL: an account is locked after its limit from any address, an address after its own,
 * the window slides, a success clears the account; the counts survive a restart (a new throttle
 * on the same database) and are shared by replicas (two throttles on one database, each
 * recording some of the failures); only hashes of the keys are stored.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../store/database.ts';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import { DEFAULT_THROTTLE_LIMITS, createLoginThrottle } from './throttle.ts';

describeEachBackend('the sign-in throttle in the database', (backend) => {
  let db: Database;
  let now = Date.parse('2026-11-27T12:00:00Z');
  const clock = () => now;
  const limits = { perAccount: 3, perAddress: 5, windowMs: 60_000 };

  before(async () => {
    db = await backend.open();
  });
  after(() => db.close());

  it('locks an account after its limit, an address after its own, and forgets after the window', async () => {
    const throttle = createLoginThrottle(db, limits, clock);
    for (let i = 0; i < 3; i++) {
      assert.equal(await throttle.retryAfter('alice', '10.0.0.1'), 0);
      await throttle.failed('alice', '10.0.0.1');
      now += 1000;
    }
    assert.equal(await throttle.retryAfter('alice', '10.0.0.2'), 57, 'the account is locked from any address until its first failure ages out');
    assert.equal(await throttle.retryAfter('bob', '10.0.0.2'), 0, 'another account is not');
    await throttle.failed('bob', '10.0.0.1');
    await throttle.failed('carol', '10.0.0.1');
    assert.ok((await throttle.retryAfter('dave', '10.0.0.1')) > 0, 'five failures from one address lock the address');
    now += 60_001;
    assert.equal(await throttle.retryAfter('alice', '10.0.0.1'), 0, 'the window slid past the failures');
    await throttle.failed('erin', '10.0.0.3');
    await throttle.succeeded('erin');
    assert.equal(await throttle.retryAfter('erin', '10.0.0.4'), 0);
    const { rows } = await db.query<{ key_hash: string }>('SELECT key_hash FROM auth_login_failures');
    assert.ok(rows.length > 0 && rows.every((row) => /^[0-9a-f]{64}$/.test(row.key_hash)), 'only hashes are stored');
    const stale = await db.query<{ n: number | string }>('SELECT count(*) AS n FROM auth_login_failures WHERE failed_at <= $1', [new Date(now - limits.windowMs).toISOString()]);
    assert.equal(Number(stale.rows[0]!.n), 0, 'failures older than the window were deleted with the next failure');
  });

  it('survives a restart and is shared by replicas: failures recorded by two throttles lock the account for a third', async () => {
    now += 120_000;
    const replicaA = createLoginThrottle(db, DEFAULT_THROTTLE_LIMITS, clock);
    const replicaB = createLoginThrottle(db, DEFAULT_THROTTLE_LIMITS, clock);
    for (let i = 0; i < DEFAULT_THROTTLE_LIMITS.perAccount; i++) await (i % 2 === 0 ? replicaA : replicaB).failed('mallory-target@acme.test', `192.0.2.${i}`);
    assert.ok((await replicaA.retryAfter('mallory-target@acme.test', '198.51.100.7')) > 0, 'replica A counts B’s failures');
    assert.ok((await replicaB.retryAfter('mallory-target@acme.test', '198.51.100.7')) > 0, 'replica B counts A’s failures');
    const restarted = createLoginThrottle(db, DEFAULT_THROTTLE_LIMITS, clock);
    assert.equal(await restarted.retryAfter('mallory-target@acme.test', '198.51.100.7'), 15 * 60, 'a new process sees the lock, for the whole window');
    assert.equal(await restarted.retryAfter('someone-else@acme.test', '198.51.100.7'), 0);
  });
});
