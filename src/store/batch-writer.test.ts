import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBatchWriter, isRowError } from './batch-writer.ts';
import { QuiverError, invalidInput, isQuiverError } from '../core/errors.ts';

/** A write that stores every item unless the batch holds a bad one, like one INSERT statement. */
function rejectingWrite(isBad: (item: number) => boolean, error: () => unknown) {
  const stored: number[] = [];
  const writes: number[][] = [];
  return {
    stored,
    writes,
    async write(batch: number[]) {
      writes.push([...batch]);
      if (batch.some(isBad)) throw error();
      stored.push(...batch);
    },
  };
}

/** A write that blocks until released, so a test decides when each write ends. */
function controlledWrites() {
  const calls: number[][] = [];
  const releases: Array<() => void> = [];
  const waiters: Array<() => void> = [];
  let running = 0;
  let settled = 0;
  const state = {
    calls,
    most: 0,
    write(batch: number[]): Promise<void> {
      calls.push([...batch]);
      running++;
      state.most = Math.max(state.most, running);
      for (const wake of waiters.splice(0)) wake();
      return new Promise<void>((resolve) =>
        releases.push(() => {
          running--;
          settled++;
          resolve();
          for (const wake of waiters.splice(0)) wake();
        }),
      );
    },
    releaseAll(): void {
      for (const release of releases.splice(0)) release();
    },
    /** Resolves once `count` writes have started. */
    async started(count: number): Promise<void> {
      while (calls.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    /** Resolves once `count` writes have ended (releasing each one as it starts). */
    async settledCount(count: number): Promise<void> {
      state.releaseAll();
      while (settled < count) {
        await new Promise<void>((resolve) => waiters.push(resolve));
        state.releaseAll();
      }
    },
  };
  return state;
}

/**
 * Mocked setTimeout and Date (setImmediate stays real: the writer yields to the event loop with it),
 * so a loaded machine cannot reorder the writer's timers and the test's waits.
 */
function mockClock(t: { mock: { timers: { enable(options: { apis: Array<'setTimeout' | 'Date'>; now: number }): void; tick(ms: number): void } } }) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  const settle = async (): Promise<void> => {
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    /** Moves the clock on by `ms`, one millisecond at a time, letting due writes run at each step. */
    async advance(ms: number): Promise<void> {
      for (let step = 0; step < ms; step += 1) {
        t.mock.timers.tick(1);
        await settle();
      }
    },
  };
}

describe('batch writer', () => {
  it('writes full batches at once and partial ones after flushMs, in order', async (t) => {
    const clock = mockClock(t);
    const written: number[][] = [];
    const writer = createBatchWriter<number>({ write: async (batch) => void written.push(batch), flushMs: 20, batchSize: 3, maxQueue: 100 });
    for (const n of [1, 2, 3, 4]) writer.push(n);
    await writer.flush();
    assert.deepEqual(written, [[1, 2, 3], [4]]);
    writer.push(5);
    await clock.advance(19);
    assert.equal(written.length, 2, 'not before flushMs');
    await clock.advance(1);
    assert.deepEqual(written.at(-1), [5]);
    assert.equal(writer.size, 0);
  });

  it('with maxWaitMs, a partial batch waits for a pause in pushes, but never longer than maxWaitMs', async (t) => {
    const clock = mockClock(t);
    const written: Array<{ batch: number[]; at: number }> = [];
    const writer = createBatchWriter<number>({ write: async (batch) => void written.push({ batch, at: Date.now() }), flushMs: 200, maxWaitMs: 450, batchSize: 1_000, maxQueue: 10_000 });
    // A burst: a push every 10 ms for a second leaves no 200 ms pause.
    for (let n = 0; n < 100; n += 1) {
      writer.push(n);
      await clock.advance(10);
    }
    // Without the quiet period the burst would have been written every 200 ms (5 writes); with it,
    // each write waited maxWaitMs from the oldest item it holds.
    assert.deepEqual(written.map((w) => w.at), [450, 900]);
    // The pause after the burst writes the rest, flushMs after the last push.
    await clock.advance(189);
    assert.equal(written.length, 2);
    await clock.advance(1);
    assert.equal(written.length, 3);
    assert.deepEqual(written.flatMap((w) => w.batch), Array.from({ length: 100 }, (_, n) => n));
    // A lone push is written after flushMs, not maxWaitMs.
    const lone = Date.now();
    writer.push(999);
    await clock.advance(200);
    assert.deepEqual(written.at(-1), { batch: [999], at: lone + 200 });
  });

  it('with maxWaitMs, a burst of pushes does not set a timer per push, and still writes flushMs after the last (issue #28)', async (t) => {
    const clock = mockClock(t);
    const armed = t.mock.method(globalThis, 'setTimeout');
    const written: Array<{ batch: number[]; at: number }> = [];
    const writer = createBatchWriter<number>({ write: async (batch) => void written.push({ batch, at: Date.now() }), flushMs: 50, maxWaitMs: 1_000, batchSize: 1_000, maxQueue: 10_000 });
    // 200 pushes, 1 ms apart: one quiet period that keeps moving on.
    for (let n = 0; n < 200; n += 1) {
      writer.push(n);
      await clock.advance(1);
    }
    // The timer re-arms once per flushMs at most (the old writer cleared and set one per push: 200).
    assert.ok(armed.mock.callCount() <= 200 / 50 + 1, `timers set: ${armed.mock.callCount()}`);
    assert.equal(written.length, 0, 'no pause yet');
    // The write comes flushMs after the last push (at 199), not earlier.
    await clock.advance(48);
    assert.equal(written.length, 0);
    await clock.advance(2);
    assert.deepEqual(written.map((w) => ({ n: w.batch.length, at: w.at })), [{ n: 200, at: 249 }]);
  });

  it('writes a full batch in chunks of chunkSize, and the event loop runs between the chunks (issue #28)', async () => {
    const written: number[][] = [];
    // What ran between writes: a timer-free I/O stand-in (setImmediate) queued while each write runs.
    const between: number[] = [];
    const writer = createBatchWriter<number>({
      write: async (batch) => {
        written.push(batch);
        setImmediate(() => between.push(written.length));
      },
      flushMs: 60_000,
      batchSize: 100,
      chunkSize: 25,
      maxQueue: 1_000,
    });
    for (let n = 0; n < 100; n += 1) writer.push(n);
    // The push that filled the batch started the drain; flush waits for it.
    await writer.flush();
    assert.deepEqual(
      written.map((batch) => batch.length),
      [25, 25, 25, 25],
    );
    assert.deepEqual(written.flat(), Array.from({ length: 100 }, (_, n) => n));
    // Work queued during write k ran before write k + 1 began.
    assert.deepEqual(between.slice(0, 3), [1, 2, 3]);
    // A flush of a partial queue is chunked too.
    for (let n = 100; n < 160; n += 1) writer.push(n);
    await writer.flush();
    assert.deepEqual(
      written.slice(4).map((batch) => batch.length),
      [25, 25, 10],
    );
  });

  it('drops the oldest item when full, and reports a failing batch without throwing', async () => {
    const dropped: number[] = [];
    const errors: number[][] = [];
    const settled: number[] = [];
    const writer = createBatchWriter<number>({
      write: async () => {
        throw new Error('disk full');
      },
      flushMs: 1_000,
      batchSize: 10,
      maxQueue: 2,
      onDrop: (n) => dropped.push(n),
      onError: (_error, batch) => errors.push(batch),
      onSettled: (batch) => settled.push(...batch),
    });
    writer.push(1);
    writer.push(2);
    writer.push(3);
    assert.deepEqual(dropped, [1]);
    await writer.flush();
    assert.deepEqual(errors, [[2, 3]]);
    assert.deepEqual(settled, [2, 3]);
  });

  it('runs one flush at a time', async () => {
    let running = 0;
    let most = 0;
    const writer = createBatchWriter<number>({
      write: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
      },
      flushMs: 1_000,
      batchSize: 1,
      maxQueue: 100,
    });
    for (let i = 0; i < 10; i++) writer.push(i);
    await Promise.all([writer.flush(), writer.flush(), writer.flush()]);
    assert.equal(most, 1);
    assert.equal(writer.size, 0);
  });

  it('coalesces: items pushed during a write wait for it; full batches follow at once, a partial rest waits for the timer', async () => {
    const gate = controlledWrites();
    const writer = createBatchWriter<number>({ write: gate.write, flushMs: 60_000, batchSize: 3, maxQueue: 100 });
    for (const n of [1, 2, 3]) writer.push(n);
    await gate.started(1);
    // Seven items arrive while [1, 2, 3] is being written: no write starts for any of them.
    for (const n of [4, 5, 6, 7, 8, 9, 10]) writer.push(n);
    assert.equal(gate.calls.length, 1);
    gate.releaseAll();
    await gate.started(2);
    gate.releaseAll();
    await gate.started(3);
    await gate.settledCount(3);
    // The two full batches are written one after the other; [10] is left for the timer.
    assert.deepEqual(gate.calls, [[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
    assert.equal(gate.most, 1);
    assert.equal(writer.size, 1);
    const flushed = writer.flush();
    await gate.started(4);
    gate.releaseAll();
    await flushed;
    assert.deepEqual(gate.calls.at(-1), [10]);
    assert.equal(writer.size, 0);
  });

  it('a steady trickle: what arrived during a write is not written at once but together, later', async () => {
    const gate = controlledWrites();
    const writer = createBatchWriter<number>({ write: gate.write, flushMs: 60_000, batchSize: 200, maxQueue: 1_000 });
    writer.push(0);
    const first = writer.flush();
    await gate.started(1);
    // Searches keep coming while the first write runs (the stdio gateway case).
    for (let n = 1; n <= 20; n++) writer.push(n);
    gate.releaseAll();
    await first;
    assert.equal(gate.calls.length, 1, 'no write per item that arrived during the previous one');
    assert.equal(writer.size, 20);
    const second = writer.flush();
    await gate.started(2);
    gate.releaseAll();
    await second;
    assert.deepEqual(gate.calls, [[0], Array.from({ length: 20 }, (_, i) => i + 1)]);
  });

  it('flush writes what was queued when it was called, in batches of at most batchSize', async () => {
    const written: number[][] = [];
    const writer = createBatchWriter<number>({ write: async (batch) => void written.push(batch), flushMs: 60_000, batchSize: 4, maxQueue: 100 });
    for (let n = 0; n < 10; n++) writer.push(n);
    await writer.flush();
    assert.deepEqual(written, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]);
    assert.equal(writer.size, 0);
  });

  it('never writes in the turn of the event loop that asked for it, nor two batches in one turn', async () => {
    const order: string[] = [];
    const writer = createBatchWriter<number>({
      // Like the embedded database: the statement holds the thread, the promise settles in microtasks.
      write: async (batch) => {
        order.push(`write ${batch.join(',')}`);
        // A request that arrives during this write: the loop owes it a turn.
        if (batch[0] === 0) setImmediate(() => order.push('request'));
      },
      flushMs: 60_000,
      batchSize: 2,
      maxQueue: 100,
    });
    writer.push(0);
    writer.push(1);
    // The push that filled a batch belongs to a request: its write waits for the next turn.
    assert.deepEqual(order, []);
    for (let n = 2; n < 6; n++) writer.push(n);
    await writer.flush();
    assert.deepEqual(order, ['write 0,1', 'request', 'write 2,3', 'write 4,5']);
  });

  it('a writer that flushes another one first does not run both writes in one turn', async () => {
    const order: string[] = [];
    const events = createBatchWriter<number>({
      write: async () => {
        order.push('events');
        setImmediate(() => order.push('request'));
      },
      flushMs: 60_000,
      batchSize: 10,
      maxQueue: 100,
    });
    const outcomes = createBatchWriter<number>({
      write: async () => {
        await events.flush();
        order.push('outcomes');
      },
      flushMs: 60_000,
      batchSize: 10,
      maxQueue: 100,
    });
    events.push(1);
    outcomes.push(1);
    await outcomes.flush();
    assert.deepEqual(order, ['events', 'request', 'outcomes']);
  });

  it('two writers never write in one turn: the loop polls between their chunks (issue #28)', async () => {
    const order: string[] = [];
    const writerOf = (name: string) =>
      createBatchWriter<number>({
        // Like the embedded database: the statement holds the thread, the promise settles in microtasks.
        write: async () => {
          order.push(name);
          // A request that arrives during this write: the loop owes it a turn before the next write.
          setImmediate(() => order.push(`request after ${name}`));
        },
        flushMs: 60_000,
        batchSize: 10,
        chunkSize: 5,
        maxQueue: 100,
      });
    const events = writerOf('events');
    const calls = writerOf('calls');
    for (let n = 0; n < 10; n++) {
      events.push(n);
      calls.push(n);
    }
    await Promise.all([events.flush(), calls.flush()]);
    assert.equal(order.filter((entry) => !entry.startsWith('request')).length, 4);
    for (let index = 1; index < order.length; index++) {
      if (order[index]!.startsWith('request')) continue;
      assert.ok(order[index - 1]!.startsWith('request'), `two writes in one turn: ${order.join(', ')}`);
    }
  });

  it('stores every good item of a batch with a bad one, and reports each bad item alone', async () => {
    const bad = new Set([3, 11, 12]);
    const target = rejectingWrite((n) => bad.has(n), () => invalidInput('the database refused a value'));
    const errors: Array<{ error: unknown; batch: number[] }> = [];
    const settled: number[] = [];
    const writer = createBatchWriter<number>({
      write: target.write,
      flushMs: 1_000,
      batchSize: 16,
      maxQueue: 100,
      onError: (error, batch) => errors.push({ error, batch }),
      onSettled: (batch) => settled.push(...batch),
    });
    for (let n = 0; n < 16; n++) writer.push(n);
    await writer.flush();
    assert.deepEqual(target.stored.sort((a, b) => a - b), [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15]);
    assert.deepEqual(errors.map((e) => e.batch), [[3], [11], [12]]);
    assert.ok(errors.every((e) => isQuiverError(e.error, 'invalid_input')));
    // Settled once per batch that left the queue, not once per retried half.
    assert.deepEqual(settled, Array.from({ length: 16 }, (_, n) => n));
  });

  it('finds one bad item by bisection: about 2·log2(n) extra writes, not n', async () => {
    const target = rejectingWrite((n) => n === 41, () => invalidInput('refused'));
    const writer = createBatchWriter<number>({ write: target.write, flushMs: 1_000, batchSize: 64, maxQueue: 100 });
    for (let n = 0; n < 64; n++) writer.push(n);
    await writer.flush();
    assert.equal(target.stored.length, 63);
    assert.ok(!target.stored.includes(41));
    assert.equal(target.writes.length, 1 + 2 * 6);
  });

  it('isolates a bad item on a raw SQLSTATE of classes 22, 23 and 54 too', async () => {
    for (const code of ['22021', '22P05', '23503', '54001']) {
      const target = rejectingWrite((n) => n === 2, () => Object.assign(new Error('refused'), { code }));
      const rejected: number[][] = [];
      const writer = createBatchWriter<number>({ write: target.write, flushMs: 1_000, batchSize: 4, maxQueue: 10, onError: (_e, batch) => rejected.push(batch) });
      for (const n of [1, 2, 3, 4]) writer.push(n);
      await writer.flush();
      assert.deepEqual(target.stored.sort(), [1, 3, 4], code);
      assert.deepEqual(rejected, [[2]], code);
    }
  });

  it('reports a failure that does not blame the rows once, for the whole batch, without retries', async () => {
    const target = rejectingWrite(() => true, () => Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }));
    const errors: number[][] = [];
    const writer = createBatchWriter<number>({ write: target.write, flushMs: 1_000, batchSize: 8, maxQueue: 10, onError: (_e, batch) => errors.push(batch) });
    for (let n = 0; n < 8; n++) writer.push(n);
    await writer.flush();
    assert.deepEqual(errors, [[0, 1, 2, 3, 4, 5, 6, 7]]);
    assert.equal(target.writes.length, 1);
  });

  it('takes the row-blame decision from isRowError when given', async () => {
    const target = rejectingWrite((n) => n === 0, () => new Error('custom'));
    const errors: number[][] = [];
    const writer = createBatchWriter<number>({
      write: target.write,
      flushMs: 1_000,
      batchSize: 3,
      maxQueue: 10,
      isRowError: (error) => (error as Error).message === 'custom',
      onError: (_e, batch) => errors.push(batch),
    });
    for (const n of [0, 1, 2]) writer.push(n);
    await writer.flush();
    assert.deepEqual(errors, [[0]]);
    assert.deepEqual(target.stored.sort(), [1, 2]);
  });

  it('isRowError: invalid_input and data SQLSTATEs blame rows; other errors do not', () => {
    assert.equal(isRowError(invalidInput('x')), true);
    assert.equal(isRowError({ code: '22P02' }), true);
    assert.equal(isRowError({ code: '23505' }), true);
    assert.equal(isRowError({ code: '54001' }), true);
    assert.equal(isRowError(new QuiverError('unavailable', 'down')), false);
    assert.equal(isRowError({ code: '08006' }), false);
    assert.equal(isRowError({ code: '57014' }), false);
    assert.equal(isRowError(new Error('plain')), false);
    assert.equal(isRowError(undefined), false);
    assert.equal(isRowError('22P02'), false);
  });
});
