import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SearchHistory } from './search-history.ts';

describe('SearchHistory (seed 004 §8)', () => {
  function setup(overrides = {}) {
    let now = 0;
    const history = new SearchHistory({ overlapRatio: 0.8, windowMs: 1000, size: 3, now: () => now, ...overrides });
    return { history, advance: (ms: number) => (now += ms) };
  }
  test('rejects bad options', () => {
    assert.throws(() => new SearchHistory({ overlapRatio: 0, windowMs: 1, size: 1, now: () => 0 }), RangeError);
    assert.throws(() => new SearchHistory({ overlapRatio: 1.2, windowMs: 1, size: 1, now: () => 0 }), RangeError);
    assert.throws(() => new SearchHistory({ overlapRatio: 0.5, windowMs: 0, size: 1, now: () => 0 }), RangeError);
  });
  test('a search overlapping a recent one above the ratio is redundant', () => {
    const { history, advance } = setup();
    assert.deepEqual(history.record('send email', ['a', 'b', 'c', 'd', 'e']), { redundant: false });
    advance(2000 - 1500);
    const verdict = history.record('email someone', ['a', 'b', 'c', 'd', 'x']);
    assert.equal(verdict.redundant, true);
    assert.equal(verdict.redundant && verdict.previousQuery, 'send email');
    assert.equal(verdict.redundant && verdict.overlap, 0.8);
  });
  test('below the ratio, outside the window, or empty results is not redundant', () => {
    const { history, advance } = setup();
    history.record('q1', ['a', 'b', 'c', 'd', 'e']);
    assert.equal(history.record('q2', ['a', 'b', 'c', 'x', 'y']).redundant, false);
    advance(1001);
    assert.equal(history.record('q3', ['a', 'b', 'c', 'd', 'e']).redundant, false);
    assert.equal(history.record('q4', []).redundant, false);
    assert.equal(history.record('q5', []).redundant, false);
  });
  test('the history is bounded', () => {
    const { history } = setup();
    for (let i = 0; i < 5; i += 1) history.record(`q${i}`, [`t${i}`]);
    assert.equal(history.size, 3);
    assert.equal(history.record('again', ['t0']).redundant, false);
    assert.equal(history.record('again', ['t4']).redundant, true);
  });
});
