import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTokenBucket, takeAll } from './rate-limit.ts';
import { createSemaphore } from './semaphore.ts';
import { isQuiverError } from '../core/errors.ts';

describe('token bucket', () => {
  it('starts full with `burst` tokens and refuses the next with a retry time', () => {
    let now = 0;
    const bucket = createTokenBucket({ requestsPerMinute: 60, burst: 3 }, { now: () => now });
    for (let index = 0; index < 3; index += 1) assert.equal(bucket.take().ok, true);
    const refused = bucket.take();
    assert.equal(refused.ok, false);
    assert.equal((refused as { retryAfterMs: number }).retryAfterMs, 1_000);
    now += 999;
    assert.equal(bucket.take().ok, false);
    now += 1;
    assert.equal(bucket.take().ok, true);
  });

  it('refills continuously but never above burst', () => {
    let now = 0;
    const bucket = createTokenBucket({ requestsPerMinute: 600, burst: 2 }, { now: () => now });
    bucket.take();
    bucket.take();
    now += 60_000;
    assert.equal(bucket.available(), 2);
  });

  it('defaults burst to one second of traffic, at least 1', () => {
    const clock = { now: () => 0 };
    assert.equal(createTokenBucket({ requestsPerMinute: 600 }, clock).available(), 10);
    assert.equal(createTokenBucket({ requestsPerMinute: 1 }, clock).available(), 1);
  });

  it('peek does not consume', () => {
    const bucket = createTokenBucket({ requestsPerMinute: 60, burst: 1 }, { now: () => 0 });
    assert.equal(bucket.peek().ok, true);
    assert.equal(bucket.peek().ok, true);
    assert.equal(bucket.take().ok, true);
    assert.equal(bucket.peek().ok, false);
  });

  it('takeAll takes from every bucket or from none', () => {
    const clock = { now: () => 0 };
    const plugin = createTokenBucket({ requestsPerMinute: 60, burst: 5 }, clock);
    const tool = createTokenBucket({ requestsPerMinute: 60, burst: 1 }, clock);
    assert.equal(takeAll([plugin, tool]).ok, true);
    const refused = takeAll([plugin, tool]);
    assert.equal(refused.ok, false);
    assert.equal(plugin.available(), 4, 'the plugin bucket is not charged when the tool bucket refuses');
  });
});

describe('semaphore', () => {
  it('queues beyond the limit in FIFO order', async () => {
    const semaphore = createSemaphore(1, 10, 'test');
    const release = await semaphore.acquire();
    const order: number[] = [];
    const second = semaphore.acquire().then((next) => (order.push(2), next));
    const third = semaphore.acquire().then((next) => (order.push(3), next));
    assert.equal(semaphore.waiting(), 2);
    release();
    (await second)();
    (await third)();
    assert.deepEqual(order, [2, 3]);
    assert.equal(semaphore.inUse(), 0);
  });

  it('rejects with rate_limited when the queue is full', async () => {
    const semaphore = createSemaphore(1, 0, 'test');
    await semaphore.acquire();
    await assert.rejects(semaphore.acquire(), (error) => isQuiverError(error, 'rate_limited'));
  });

  it('a waiter leaves the queue when its signal aborts', async () => {
    const semaphore = createSemaphore(1, 10, 'test');
    const release = await semaphore.acquire();
    const controller = new AbortController();
    const waiting = semaphore.acquire(controller.signal);
    controller.abort(new Error('gave up'));
    await assert.rejects(waiting, /gave up/);
    assert.equal(semaphore.waiting(), 0);
    release();
    assert.equal(semaphore.inUse(), 0);
  });

  it('release is idempotent', async () => {
    const semaphore = createSemaphore(2, 10, 'test');
    const release = await semaphore.acquire();
    release();
    release();
    assert.equal(semaphore.inUse(), 0);
  });
});
