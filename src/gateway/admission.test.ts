import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Admission, overloadRetryAfter, overloaded } from './admission.ts';
import { QuiverError } from '../core/errors.ts';

/** A promise the test resolves by hand, to hold a slot. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('Admission (issue #18: bounded work, quick refusals)', () => {
  test('rejects bad options', () => {
    assert.throws(() => new Admission({ maxConcurrent: 0, maxQueued: 1, maxWaitMs: 1 }), RangeError);
    assert.throws(() => new Admission({ maxConcurrent: 1, maxQueued: -1, maxWaitMs: 1 }), RangeError);
    assert.throws(() => new Admission({ maxConcurrent: 1, maxQueued: 1, maxWaitMs: 0 }), RangeError);
  });

  test('runs at most maxConcurrent at once, queues the rest in order, refuses beyond the queue', async () => {
    const admission = new Admission({ maxConcurrent: 2, maxQueued: 1, maxWaitMs: 60_000 });
    const started: string[] = [];
    const gates = { a: gate(), b: gate(), c: gate() };
    const run = (name: keyof typeof gates) => admission.run(async () => {
      started.push(name);
      await gates[name].promise;
      return name;
    });
    const a = run('a');
    const b = run('b');
    const c = run('c');
    assert.deepEqual(started, ['a', 'b']);
    assert.deepEqual(admission.load, { active: 2, queued: 1 });
    assert.equal(admission.saturated, true);
    await assert.rejects(admission.run(async () => 'd'), (error: unknown) => overloadRetryAfter(error) === 1);
    gates.a.open();
    assert.equal(await a, 'a');
    assert.deepEqual(started, ['a', 'b', 'c'], 'the freed slot goes to the queued request');
    assert.equal(admission.saturated, false);
    gates.b.open();
    gates.c.open();
    assert.deepEqual(await Promise.all([b, c]), ['b', 'c']);
    assert.deepEqual(admission.load, { active: 0, queued: 0 });
  });

  test('a failing request frees its slot', async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 0, maxWaitMs: 1000 });
    await assert.rejects(admission.run(async () => { throw new Error('boom'); }), /boom/);
    assert.equal(await admission.run(async () => 'next'), 'next');
  });

  test('a request waiting longer than maxWaitMs is refused and leaves the queue', async () => {
    const admission = new Admission({ maxConcurrent: 1, maxQueued: 5, maxWaitMs: 5 });
    const held = gate();
    const holder = admission.run(() => held.promise);
    // The wait timer is unref'd (it must not keep a server alive alone); in this bare test nothing
    // else holds the event loop open, so hold it while the refusal is awaited.
    const keepAlive = setInterval(() => {}, 1_000);
    try {
      await assert.rejects(admission.run(async () => 'late'), (error: unknown) => error instanceof QuiverError && error.code === 'rate_limited' && /no slot within 5 ms/.test(error.message));
    } finally {
      clearInterval(keepAlive);
    }
    assert.deepEqual(admission.load, { active: 1, queued: 0 });
    held.open();
    await holder;
    assert.deepEqual(admission.load, { active: 0, queued: 0 });
  });

  test('overloadRetryAfter reads only overload refusals', () => {
    assert.equal(overloadRetryAfter(overloaded('x', 7)), 7);
    assert.equal(overloadRetryAfter(new QuiverError('rate_limited', 'other')), undefined);
    assert.equal(overloadRetryAfter(new Error('x')), undefined);
  });
});
