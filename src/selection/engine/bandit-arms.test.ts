import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../store/database.ts';
import { contextOutcomes } from '../bandit.ts';
import { createBanditArms } from './bandit-arms.ts';

/** A database whose only table is the context's stored arms (what `listContextArms` reads). */
function storedArms(rows: Array<{ tool_id: string; alpha: number; beta_param: number }>): Database & { reads: number } {
  const db = {
    reads: 0,
    async query() {
      db.reads++;
      return { rows: rows.map((row) => ({ ...row, total_selections: 0, total_successes: 0 })), affectedRows: 0 };
    },
  };
  return db as unknown as Database & { reads: number };
}

describe('bandit arms cache: the context outcomes running total (issue #28)', () => {
  it('equals the sum over every arm after loading and after every applied increment', async () => {
    // A bad stored shape (0, NaN) counts as the prior, as contextOutcomes counts it.
    const db = storedArms([
      { tool_id: 'a', alpha: 5, beta_param: 2 },
      { tool_id: 'b', alpha: 1, beta_param: 4 },
      { tool_id: 'c', alpha: 0, beta_param: Number.NaN },
    ]);
    const arms = createBanditArms({ db, now: () => 0, banditMs: 60_000 });
    const context = await arms.get('ctx');
    assert.deepEqual(context.outcomes(), { successes: 4, failures: 4 });
    assert.deepEqual(context.outcomes(), contextOutcomes(context.arms.values()));

    const steps = [
      [{ toolId: 'a', alpha: 1, beta: 0, selections: 1, successes: 1 }],
      // A new arm, an existing one failing, and an offered-only one (no change to the posterior).
      [
        { toolId: 'd', alpha: 2, beta: 1, selections: 3, successes: 2 },
        { toolId: 'b', alpha: 0, beta: 1, selections: 1, successes: 0 },
        { toolId: 'a', alpha: 0, beta: 0, selections: 1, successes: 0 },
      ],
      // An arm stored with a bad shape moves from the prior.
      [{ toolId: 'c', alpha: 1, beta: 1, selections: 2, successes: 1 }],
    ];
    const expected = [
      { successes: 5, failures: 4 },
      { successes: 7, failures: 6 },
      // c was (0, NaN), read as (1, 1) by the sum; incremented in place it is (1, NaN) -> 0 successes, 0 failures.
      contextOutcomes([...context.arms.values()]),
    ];
    for (const [i, step] of steps.entries()) {
      arms.apply('ctx', step);
      const summed = contextOutcomes(context.arms.values());
      assert.deepEqual(context.outcomes(), summed, `after step ${i}`);
      if (i < 2) assert.deepEqual(context.outcomes(), expected[i], `after step ${i}`);
    }
    assert.equal(db.reads, 1, 'increments change the cached context, they do not re-read it');
  });

  it('keeps the total with the arms through a reload, and applies nothing to a context not cached', async () => {
    const db = storedArms([{ tool_id: 'a', alpha: 3, beta_param: 1 }]);
    const arms = createBanditArms({ db, now: () => 0, banditMs: 60_000 });
    arms.apply('ctx', [{ toolId: 'a', alpha: 5, beta: 5, selections: 10, successes: 5 }]);
    const first = await arms.get('ctx');
    assert.deepEqual(first.outcomes(), { successes: 2, failures: 0 }, 'an increment for an uncached context is in the stored rows, not added twice');
    arms.apply('ctx', [{ toolId: 'a', alpha: 1, beta: 2, selections: 3, successes: 1 }]);
    assert.deepEqual(first.outcomes(), { successes: 3, failures: 2 });
    arms.invalidate('bandit');
    const reloaded = await arms.get('ctx');
    assert.notEqual(reloaded, first);
    assert.deepEqual(reloaded.outcomes(), contextOutcomes(reloaded.arms.values()));
  });

  it('hands out arms that cannot be changed behind the total', async () => {
    const arms = createBanditArms({ db: storedArms([{ tool_id: 'a', alpha: 3, beta_param: 1 }]), now: () => 0, banditMs: 60_000 });
    const context = await arms.get('ctx');
    assert.throws(() => {
      (context.arms.get('a') as { alpha: number }).alpha = 100;
    }, TypeError);
    assert.deepEqual(context.outcomes(), { successes: 2, failures: 0 });
  });
});

/** A database whose reads of the arms wait until the test answers them, one answer per read. */
function heldArms(): Database & { reads: number; answer(rows: Array<{ tool_id: string; alpha: number; beta_param: number }>): void; fail(error: Error): void } {
  const waiting: Array<{ resolve: (value: unknown) => void; reject: (error: Error) => void }> = [];
  const db = {
    reads: 0,
    query() {
      db.reads++;
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    answer(rows: Array<{ tool_id: string; alpha: number; beta_param: number }>) {
      waiting.shift()!.resolve({ rows: rows.map((row) => ({ ...row, total_selections: 0, total_successes: 0 })), affectedRows: 0 });
    },
    fail(error: Error) {
      waiting.shift()!.reject(error);
    },
  };
  return db as unknown as ReturnType<typeof heldArms>;
}

/** What `promise` settled to by the next turn of the event loop, or 'still waiting'. */
async function settledByNextTurn<T>(promise: Promise<T>): Promise<T | 'still waiting'> {
  return Promise.race([promise, new Promise<'still waiting'>((resolve) => setImmediate(() => resolve('still waiting')))]);
}

/** A context's arms read once (tool a, alpha 3) from a held database, with a clock the test moves. */
async function loadedContext() {
  const clock = { now: 0 };
  const db = heldArms();
  const arms = createBanditArms({ db, now: () => clock.now, banditMs: 5_000 });
  const first = arms.get('ctx');
  db.answer([{ tool_id: 'a', alpha: 3, beta_param: 1 }]);
  return { clock, db, arms, loaded: await first };
}

describe('bandit arms cache: expired arms are served while one read reloads them (issue #28)', () => {
  it('hands out the expired arms at once, reads once for every selection meanwhile, then the reloaded ones', async () => {
    let clock = 0;
    const db = heldArms();
    const arms = createBanditArms({ db, now: () => clock, banditMs: 5_000 });
    const first = arms.get('ctx');
    const second = arms.get('ctx');
    assert.equal(db.reads, 1, 'concurrent misses of one context are one read');
    db.answer([{ tool_id: 'a', alpha: 3, beta_param: 1 }]);
    const loaded = await first;
    assert.equal(await second, loaded);

    clock = 6_000; // expired 1 s ago
    const stale = await settledByNextTurn(arms.get('ctx'));
    assert.equal(stale, loaded, 'the expired arms come back without waiting for the database');
    arms.apply('ctx', [{ toolId: 'a', alpha: 1, beta: 0, selections: 1, successes: 1 }]);
    assert.equal(loaded.arms.get('a')?.alpha, 4, 'expired arms in use still take increments');
    assert.equal(await settledByNextTurn(arms.get('ctx')), loaded);
    assert.equal(db.reads, 2, 'one reload for every selection while it runs');

    db.answer([{ tool_id: 'a', alpha: 9, beta_param: 2 }]);
    await new Promise((resolve) => setImmediate(resolve));
    const reloaded = await settledByNextTurn(arms.get('ctx'));
    assert.notEqual(reloaded, 'still waiting');
    assert.equal((reloaded as Awaited<ReturnType<typeof arms.get>>).arms.get('a')?.alpha, 9);
    assert.equal(db.reads, 2);
  });

  it('waits for the read when the arms expired more than banditMs ago, and after an invalidation', async () => {
    const { clock, db, arms } = await loadedContext();

    clock.now = 10_000; // expired 5 s ago: too old to hand out
    const late = arms.get('ctx');
    assert.equal(await settledByNextTurn(late), 'still waiting');
    db.answer([{ tool_id: 'a', alpha: 4, beta_param: 1 }]);
    assert.equal((await late).arms.get('a')?.alpha, 4);

    arms.invalidate('bandit');
    const afterInvalidation = arms.get('ctx');
    assert.equal(await settledByNextTurn(afterInvalidation), 'still waiting');
    db.answer([{ tool_id: 'a', alpha: 5, beta_param: 1 }]);
    assert.equal((await afterInvalidation).arms.get('a')?.alpha, 5);
  });

  it('does not store a reload begun before an invalidation', async () => {
    const { clock, db, arms } = await loadedContext();
    clock.now = 6_000;
    await arms.get('ctx'); // expired: served, reload running
    arms.invalidate('all');
    db.answer([{ tool_id: 'a', alpha: 7, beta_param: 1 }]); // the reload from before the invalidation
    await new Promise((resolve) => setImmediate(resolve));
    const next = arms.get('ctx');
    assert.equal(await settledByNextTurn(next), 'still waiting', 'nothing cached: the reload from before was not stored');
    db.answer([{ tool_id: 'a', alpha: 8, beta_param: 1 }]);
    assert.equal((await next).arms.get('a')?.alpha, 8);
  });

  it('drops the expired arms when their reload fails, so the next selection reads and sees the failure', async () => {
    const { clock, db, arms, loaded } = await loadedContext();
    clock.now = 6_000;
    assert.equal(await arms.get('ctx'), loaded);
    db.fail(new Error('database gone'));
    await new Promise((resolve) => setImmediate(resolve));
    const next = arms.get('ctx');
    assert.equal(await settledByNextTurn(next), 'still waiting');
    db.fail(new Error('database gone'));
    await assert.rejects(next, /database gone/);
  });
});
