/**
 * The memory of misses (issue #25): bounded per session and in sessions, expiring, taken once;
 * relatedness by a shared content word or a cosine over the floor.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createMissedRequests, relatedRequests } from './missed-requests.ts';

const miss = (text: string, at: number) => ({ text, textKey: text.toLowerCase(), at });

describe('missed requests (issue #25)', () => {
  it('keeps the newest misses of a session, once each, and forgets them when taken', () => {
    const misses = createMissedRequests({ windowMs: 60_000, maxSessions: 10, perSession: 2 });
    misses.remember('s1', miss('first try', 0));
    misses.remember('s1', miss('second try', 1));
    misses.remember('s1', miss('Second try', 2)); // the same words again replace the older one
    misses.remember('s1', miss('third try', 3));
    assert.deepEqual(misses.take('s1', 10).map((m) => m.text), ['Second try', 'third try']);
    assert.deepEqual(misses.take('s1', 10), [], 'taken once');
  });

  it('drops misses older than the window and the oldest sessions past the bound', () => {
    const misses = createMissedRequests({ windowMs: 1_000, maxSessions: 2, perSession: 3 });
    misses.remember('a', miss('old', 0));
    misses.remember('a', miss('recent', 900));
    assert.deepEqual(misses.take('a', 1_500).map((m) => m.text), ['recent']);
    for (const session of ['x', 'y', 'z']) misses.remember(session, miss(`need of ${session}`, 0));
    assert.equal(misses.size, 2);
    assert.deepEqual(misses.take('x', 0), [], 'the oldest session went first');
    assert.equal(misses.take('z', 0).length, 1);
  });

  it('relates two requests by a content word in common or a cosine at the floor', () => {
    const unit = (...values: number[]) => {
      const norm = Math.hypot(...values);
      return Float32Array.from(values.map((value) => value / norm));
    };
    const yen = { vector: unit(1, 0, 0), terms: ['yen', 'dollars', 'buy'] };
    assert.equal(relatedRequests(yen, { vector: unit(0, 1, 0), terms: ['convert', 'dollars'] }, 0.3), true, 'a word in common');
    assert.equal(relatedRequests(yen, { vector: unit(1, 1, 0), terms: ['exchange'] }, 0.3), true, 'cosine 0.71 over the floor');
    assert.equal(relatedRequests(yen, { vector: unit(1, 4, 0), terms: ['exchange'] }, 0.3), false, 'cosine 0.24 under the floor');
    assert.equal(relatedRequests(yen, { vector: unit(1, 1, 0), terms: ['exchange'] }, Number.NaN), false, 'no floor: words only');
  });
});
