import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSingleFlight } from './single-flight.ts';

/** A load that resolves when told to, counting its starts. */
function gatedLoads() {
  const gates: Array<(value: string) => void> = [];
  return {
    gates,
    starts: () => gates.length,
    load: () => new Promise<string>((resolve) => gates.push(resolve)),
  };
}

describe('single flight', () => {
  it('concurrent misses of one key share one load and store it once', async () => {
    const flight = createSingleFlight<string>();
    const loads = gatedLoads();
    const stored: string[] = [];
    const callers = [1, 2, 3].map(() => flight.run('a', loads.load, (value) => stored.push(value)));
    assert.equal(loads.starts(), 1);
    loads.gates[0]!('A');
    assert.deepEqual(await Promise.all(callers), ['A', 'A', 'A']);
    assert.deepEqual(stored, ['A']);
    // Done: the next miss loads again (the cache, not the flight, keeps values).
    void flight.run('a', loads.load, () => {});
    assert.equal(loads.starts(), 2);
  });

  it('other keys load on their own', () => {
    const flight = createSingleFlight<string>();
    const loads = gatedLoads();
    void flight.run('a', loads.load, () => {});
    void flight.run('b', loads.load, () => {});
    assert.equal(loads.starts(), 2);
  });

  it('after an invalidation a caller starts a new load, and the older load is not stored', async () => {
    const flight = createSingleFlight<string>();
    const loads = gatedLoads();
    const stored: string[] = [];
    const early = flight.run('a', loads.load, (value) => stored.push(value));
    flight.invalidate();
    const late = flight.run('a', loads.load, (value) => stored.push(value));
    assert.equal(loads.starts(), 2, 'the late caller did not join the load begun before the change');
    loads.gates[0]!('before');
    loads.gates[1]!('after');
    assert.equal(await early, 'before');
    assert.equal(await late, 'after');
    assert.deepEqual(stored, ['after']);
  });

  it('a failed load reaches every joined caller and is not stored', async () => {
    const flight = createSingleFlight<string>();
    const stored: string[] = [];
    let fail!: (error: Error) => void;
    const load = () => new Promise<string>((_resolve, reject) => (fail = reject));
    const callers = [1, 2].map(() => flight.run('a', load, (value) => stored.push(value)));
    fail(new Error('database down'));
    for (const caller of callers) await assert.rejects(caller, /database down/);
    assert.deepEqual(stored, []);
  });
});
