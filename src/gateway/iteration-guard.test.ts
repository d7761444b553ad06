import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { IterationGuard, hashArguments, loopGuidance, normalizeArguments, normalizeUrl } from './iteration-guard.ts';

function setup(overrides: Partial<ConstructorParameters<typeof IterationGuard>[0]> = {}) {
  let now = 0;
  const guard = new IterationGuard({ windowMs: 1000, maxCallsInWindow: 3, slidingWindowSize: 6, maxInSlidingWindow: 2, now: () => now, ...overrides });
  return { guard, advance: (ms: number) => (now += ms) };
}

describe('argument normalisation (seed 004 §7.2)', () => {
  test('key order, whitespace and undefined members do not change the hash', () => {
    assert.equal(hashArguments({ a: 1, b: ' x  y ' }), hashArguments({ b: 'x y', a: 1, c: undefined }));
    assert.equal(hashArguments(undefined), hashArguments({}));
  });
  test('the hash is the first 16 hex digits of the SHA-256 of the canonical normalised JSON (unchanged by the one-shot digest)', () => {
    assert.equal(hashArguments({ b: ' x  y ', a: 1 }), createHash('sha256').update('{"a":1,"b":"x y"}').digest('hex').slice(0, 16));
    assert.equal(hashArguments({ b: ' x  y ', a: 1 }), '6636d05d410fb2fe');
  });
  test('case is significant', () => {
    assert.notEqual(hashArguments({ file: 'Report.pdf' }), hashArguments({ file: 'report.pdf' }));
  });
  test('URLs: trailing slash, fragment, host case, query order and tracking parameters collapse', () => {
    assert.equal(normalizeUrl('HTTPS://Example.COM/docs/'), 'https://example.com/docs');
    assert.equal(normalizeUrl('https://example.com/a?b=2&a=1#top'), 'https://example.com/a?a=1&b=2');
    assert.equal(normalizeUrl('https://example.com/a?utm_source=x&q=1'), 'https://example.com/a?q=1');
    assert.equal(normalizeUrl('https://example.com/a/?q=1'), 'https://example.com/a?q=1');
    assert.equal(normalizeUrl('not a url'), 'not a url');
    assert.equal(hashArguments({ url: 'https://example.com/x/' }), hashArguments({ url: 'https://EXAMPLE.com/x#frag' }));
    assert.notEqual(hashArguments({ url: 'https://example.com/x?page=1' }), hashArguments({ url: 'https://example.com/x?page=2' }));
  });
  test('nested arrays and objects are normalised', () => {
    assert.deepEqual(normalizeArguments({ list: [' a ', { u: 'http://A.com/' }] }), { list: ['a', { u: 'http://a.com' }] });
  });
});

describe('IterationGuard (seed 004 §7)', () => {
  test('rejects non-positive thresholds', () => {
    assert.throws(() => new IterationGuard({ windowMs: 0, maxCallsInWindow: 1, slidingWindowSize: 1, maxInSlidingWindow: 1, now: () => 0 }), RangeError);
  });

  test('time window: more than the threshold within the window is a loop', () => {
    const { guard, advance } = setup({ slidingWindowSize: 100, maxInSlidingWindow: 100 });
    for (let i = 0; i < 3; i += 1) {
      assert.equal(guard.record('t', { q: 1 }).loop, false);
      advance(100);
    }
    const verdict = guard.record('t', { q: 1 });
    assert.equal(verdict.loop, true);
    assert.equal(verdict.loop && verdict.reason, 'time-window');
    assert.equal(verdict.count, 4);
  });

  test('calls spread beyond the time window are not a time-window loop, and old records are collected', () => {
    const { guard, advance } = setup({ slidingWindowSize: 100, maxInSlidingWindow: 100 });
    for (let i = 0; i < 6; i += 1) {
      assert.equal(guard.record('t', { q: 1 }).loop, false);
      advance(600);
    }
    guard.record('other', {});
    advance(5000);
    guard.record('x', {});
    assert.equal(guard.trackedPairs, 1);
  });

  test('a pair called again outlives older pairs: expiry follows each pair\'s last call (issue #28)', () => {
    const { guard, advance } = setup({ windowMs: 1000, slidingWindowSize: 100, maxInSlidingWindow: 100 });
    guard.record('a', {}); // t = 0
    advance(100);
    guard.record('b', {}); // t = 100
    advance(500);
    guard.record('a', {}); // t = 600: a is now the most recent pair
    advance(550);
    guard.record('c', {}); // t = 1150: b (last 100) expired, a (last 600) not
    assert.equal(guard.trackedPairs, 2);
    advance(500);
    guard.record('c', {}); // t = 1650: a expired too
    assert.equal(guard.trackedPairs, 1);
    // A snapshot restored keeps the same order, whatever order its pairs come in.
    const snapshot = guard.snapshot();
    const { guard: copy, advance: advanceCopy } = setup({ windowMs: 1000 });
    advanceCopy(1650);
    copy.restore({ ...snapshot, times: [['z', 'h', [1600]], ...snapshot.times, ['y', 'h', [100]]] });
    copy.record('c', {});
    assert.equal(copy.trackedPairs, 2, 'y (last 100) expired although it came last; z and c kept');
  });

  test('different arguments are different pairs', () => {
    const { guard } = setup({ slidingWindowSize: 100, maxInSlidingWindow: 100 });
    for (let i = 0; i < 10; i += 1) assert.equal(guard.record('t', { q: i }).loop, false);
  });

  test('sliding window catches A→B→A→B loops regardless of time', () => {
    const { guard, advance } = setup({ windowMs: 10, maxCallsInWindow: 100 });
    const verdicts = [];
    for (let i = 0; i < 3; i += 1) {
      verdicts.push(guard.record('A', { x: 1 }));
      advance(1000);
      verdicts.push(guard.record('B', { y: 1 }));
      advance(1000);
    }
    assert.deepEqual(verdicts.map((v) => v.loop), [false, false, false, false, true, true]);
    const last = verdicts[4]!;
    assert.equal(last.loop && last.reason, 'sliding-window');
  });

  test('exempt tools are never counted', () => {
    const { guard } = setup({ exemptTools: ['memory__recall'] });
    for (let i = 0; i < 10; i += 1) assert.deepEqual(guard.record('memory__recall', { k: 1 }), { loop: false, count: 0 });
    assert.ok(guard.isExempt('memory__recall'));
  });

  test('reset(tool) forgets one tool; reset() forgets all', () => {
    const { guard } = setup({ slidingWindowSize: 100, maxInSlidingWindow: 100 });
    for (let i = 0; i < 3; i += 1) {
      guard.record('t', {});
      guard.record('u', {});
    }
    guard.reset('t');
    assert.equal(guard.record('t', {}).loop, false);
    assert.equal(guard.record('u', {}).loop, true);
    guard.reset();
    assert.equal(guard.record('u', {}).loop, false);
  });

  test('guidance says why, that the result is valid, and how to continue per mode', () => {
    const verdict = { loop: true as const, reason: 'time-window' as const, count: 4, argumentHash: 'h' };
    const search = loopGuidance({ toolName: 'x__y', verdict, windowMs: 60_000, mode: 'search', specific: 'Try web__search instead.' });
    assert.match(search, /x__y' was called 4 times with the same arguments within 60 s/);
    assert.match(search, /result above is valid/);
    assert.match(search, /search_tools/);
    assert.match(search, /Try web__search instead\./);
    assert.match(loopGuidance({ toolName: 'x__y', verdict: { ...verdict, reason: 'sliding-window' }, windowMs: 1, mode: 'capabilities' }), /most recent tool calls.*load_capability/);
    assert.doesNotMatch(loopGuidance({ toolName: 'x__y', verdict, windowMs: 1, mode: 'all' }), /removed/);
  });
});
