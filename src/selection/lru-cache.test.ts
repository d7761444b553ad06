import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LruTtlCache } from './lru-cache.ts';

describe('LruTtlCache', () => {
  it('returns what was set until the TTL passes', () => {
    let now = 1_000;
    const cache = new LruTtlCache<string>({ maxEntries: 10, ttlMs: 30_000, now: () => now });
    cache.set('a', 'A');
    now += 29_999;
    assert.equal(cache.get('a'), 'A');
    now += 1;
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.size, 0, 'an expired entry is dropped when read');
  });

  it('evicts the least recently used entry, counting a read as a use', () => {
    const cache = new LruTtlCache<number>({ maxEntries: 2, ttlMs: 1_000, now: () => 0 });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('c'), 3);
    assert.equal(cache.stats.evictions, 1);
  });

  it('re-setting a key refreshes its TTL and position', () => {
    let now = 0;
    const cache = new LruTtlCache<number>({ maxEntries: 2, ttlMs: 100, now: () => now });
    cache.set('a', 1);
    now = 90;
    cache.set('a', 2);
    now = 150;
    assert.equal(cache.get('a'), 2);
  });

  it('counts hits and misses, and clears and deletes', () => {
    const cache = new LruTtlCache<number>({ maxEntries: 5, ttlMs: 100, now: () => 0 });
    cache.set('x', 1);
    cache.get('x');
    cache.get('y');
    assert.deepEqual({ hits: cache.stats.hits, misses: cache.stats.misses }, { hits: 1, misses: 1 });
    assert.equal(cache.delete('x'), true);
    assert.equal(cache.delete('x'), false);
    cache.set('z', 1);
    cache.clear();
    assert.equal(cache.size, 0);
  });

  it('updates live values in place and skips expired ones', () => {
    let now = 0;
    const cache = new LruTtlCache<{ n: number }>({ maxEntries: 5, ttlMs: 100, now: () => now });
    cache.set('old', { n: 1 });
    now = 60;
    cache.set('new', { n: 1 });
    now = 120;
    const seen: string[] = [];
    cache.forEachValue((value, key) => {
      value.n++;
      seen.push(key);
    });
    assert.deepEqual(seen, ['new']);
    assert.equal(cache.get('new')?.n, 2);
  });

  it('refuses nonsense sizes', () => {
    assert.throws(() => new LruTtlCache({ maxEntries: 0, ttlMs: 1 }), RangeError);
    assert.throws(() => new LruTtlCache({ maxEntries: 1, ttlMs: 0 }), RangeError);
  });
});

describe('LruTtlCache.getEvenExpired', () => {
  it('returns an expired value with how long ago it expired, keeps it, and counts it as a miss', () => {
    let now = 0;
    const cache = new LruTtlCache<string>({ maxEntries: 2, ttlMs: 100, now: () => now });
    assert.equal(cache.getEvenExpired('a'), undefined);
    cache.set('a', 'A');
    assert.deepEqual(cache.getEvenExpired('a'), { value: 'A' });
    now = 150;
    assert.deepEqual(cache.getEvenExpired('a'), { value: 'A', expiredForMs: 50 });
    assert.equal(cache.size, 1, 'an expired entry stays for the caller that reloads it');
    assert.equal(cache.get('a'), undefined, 'get still treats it as gone');
    assert.deepEqual(cache.stats, { hits: 1, misses: 3, evictions: 0 });
  });
});
