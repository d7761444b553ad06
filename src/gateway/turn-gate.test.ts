import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TurnGate } from './turn-gate.ts';
import { isQuiverError } from '../core/errors.ts';

/** Resolves after the current event-loop iteration's check phase (after the gate's turn). */
const nextCheckPhase = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('turn gate', () => {
  it('starts perTurn requests at once and the rest at the following turns, in arrival order', async () => {
    const gate = new TurnGate({ perTurn: 2, maxWaiting: 10 });
    const started: number[] = [];
    const entered = [0, 1, 2, 3, 4].map((n) => gate.enter().then(() => void started.push(n)));
    await Promise.resolve();
    await Promise.resolve();
    assert.deepEqual(started, [0, 1]);
    assert.equal(gate.waiting, 3);
    await nextCheckPhase();
    assert.deepEqual(started, [0, 1, 2, 3]);
    assert.equal(gate.waiting, 1);
    await nextCheckPhase();
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    await Promise.all(entered);
    assert.equal(gate.waiting, 0);
  });

  it('requests that arrive while others wait start after them, in arrival order', async () => {
    const gate = new TurnGate({ perTurn: 1, maxWaiting: 10 });
    const started: string[] = [];
    void gate.enter().then(() => started.push('a'));
    void gate.enter().then(() => started.push('b'));
    await nextCheckPhase(); // b starts here; this iteration's room is used
    void gate.enter().then(() => started.push('c'));
    void gate.enter().then(() => started.push('d'));
    await nextCheckPhase();
    await nextCheckPhase();
    assert.deepEqual(started, ['a', 'b', 'c', 'd']);
  });

  it('refuses at once with overloaded (and a retry hint) when maxWaiting requests wait', async () => {
    const gate = new TurnGate({ perTurn: 1, maxWaiting: 2 });
    const admitted = [gate.enter(), gate.enter(), gate.enter()];
    await assert.rejects(gate.enter(), (error: unknown) => {
      assert.ok(isQuiverError(error, 'rate_limited'));
      assert.equal((error.details as { retryAfterSeconds: number }).retryAfterSeconds, 1);
      return true;
    });
    await Promise.all(admitted);
    assert.equal(gate.waiting, 0);
  });

  it('refuses impossible settings', () => {
    assert.throws(() => new TurnGate({ perTurn: 0, maxWaiting: 1 }), RangeError);
    assert.throws(() => new TurnGate({ perTurn: 1, maxWaiting: -1 }), RangeError);
  });
});
