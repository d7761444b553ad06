import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBatchWriter } from './batch-writer.ts';

describe('batch writer', () => {
  it('writes full batches at once and partial ones after flushMs, in order', async () => {
    const written: number[][] = [];
    const writer = createBatchWriter<number>({ write: async (batch) => void written.push(batch), flushMs: 20, batchSize: 3, maxQueue: 100 });
    for (const n of [1, 2, 3, 4]) writer.push(n);
    await writer.flush();
    assert.deepEqual(written, [[1, 2, 3], [4]]);
    writer.push(5);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(written.at(-1), [5]);
    assert.equal(writer.size, 0);
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
});
