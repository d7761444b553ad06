import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SearchHistory } from './search-history.ts';
import { SessionRegistry } from './session-registry.ts';

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

describe('SessionRegistry (seed 004 §6.4)', () => {
  function setup(maxSessions = 2, idleTtlMs = 100) {
    let now = 0;
    return { registry: new SessionRegistry<string>({ idleTtlMs, maxSessions, now: () => now }), advance: (ms: number) => (now += ms) };
  }
  test('rejects bad options', () => {
    assert.throws(() => new SessionRegistry({ idleTtlMs: 0, maxSessions: 1, now: () => 0 }), RangeError);
    assert.throws(() => new SessionRegistry({ idleTtlMs: 1, maxSessions: 0, now: () => 0 }), RangeError);
  });
  test('idle sessions are swept; touched ones survive', () => {
    const { registry, advance } = setup(10);
    registry.add('a', 'A');
    registry.add('b', 'B');
    advance(80);
    assert.equal(registry.touch('b'), true);
    advance(30);
    assert.deepEqual(registry.sweep(), [{ id: 'a', value: 'A' }]);
    assert.equal(registry.peek('b'), 'B');
    assert.equal(registry.touch('a'), false);
  });
  test('beyond maxSessions the oldest session is evicted', () => {
    const { registry, advance } = setup(2);
    registry.add('a', 'A');
    advance(1);
    registry.add('b', 'B');
    advance(1);
    registry.touch('a');
    assert.deepEqual(registry.add('c', 'C'), [{ id: 'a', value: 'A' }]);
    assert.equal(registry.size, 2);
    assert.deepEqual(registry.values().sort(), ['B', 'C']);
  });
  test('delete returns what was there', () => {
    const { registry } = setup();
    registry.add('a', 'A');
    assert.equal(registry.delete('a'), 'A');
    assert.equal(registry.delete('a'), undefined);
  });
});
