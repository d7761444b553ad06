import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../../core/errors.ts';
import { silentLogger } from '../../core/logger.ts';
import { createCrashHistory } from './crash-history.ts';

function setup() {
  let now = 10_000;
  const clock = { now: () => now };
  const subject = { pluginId: 'p1', pluginName: 'weather', version: '1.0.0' };
  const history = createCrashHistory(() => subject, { backoff: { initialMs: 100, maxMs: 500 }, crashLoop: { maxCrashes: 3, windowMs: 1_000, cooldownMs: 5_000 } }, clock, silentLogger);
  return { history, subject, advance: (ms: number) => (now += ms) };
}

describe('crash history: backoff and crash loop (seed 003 "Error Handling")', () => {
  it('starts with no backoff, no loop and no error', () => {
    const { history } = setup();
    assert.equal(history.backoffRemaining(), 0);
    assert.equal(history.inLoop(), false);
    assert.equal(history.recentCount(), 0);
    assert.equal(history.lastError(), undefined);
  });

  it('doubles the backoff with each consecutive crash up to the maximum', () => {
    const { history, advance } = setup();
    const backoffs: number[] = [];
    for (let crash = 0; crash < 4; crash += 1) {
      history.record(`crash ${crash}`);
      backoffs.push(history.backoffRemaining());
      advance(2_000); // outside the window, so no crash loop
    }
    assert.deepEqual(backoffs, [100, 200, 400, 500]);
    assert.equal(history.lastError(), 'crash 3');
  });

  it('a successful call resets the exponent: the next crash backs off from the initial delay', () => {
    const { history, advance } = setup();
    history.record('first');
    advance(2_000);
    history.record('second');
    assert.equal(history.backoffRemaining(), 200);
    history.succeeded();
    advance(2_000);
    history.record('third');
    assert.equal(history.backoffRemaining(), 100);
  });

  it('maxCrashes within the window is a crash loop naming the plugin and the last error', () => {
    const { history, advance } = setup();
    history.record('one');
    advance(100);
    history.record('two');
    assert.equal(history.inLoop(), false);
    advance(100);
    history.record('segfault');
    assert.equal(history.inLoop(), true);
    assert.equal(history.loopUntil(), 10_200 + 5_000);
    const error = history.loopError();
    assert.ok(isQuiverError(error));
    assert.equal(error.code, 'unavailable');
    assert.match(error.message, /plugin 'weather' is in a crash loop \(3 crashes within 1 s\).*last error: segfault/);
    assert.deepEqual(error.details, { reason: 'crash_loop', pluginId: 'p1', until: 15_200 });
  });

  it('crashes older than the window do not count towards a loop', () => {
    const { history, advance } = setup();
    history.record('one');
    advance(600);
    history.record('two');
    advance(600);
    history.record('three');
    assert.equal(history.inLoop(), false);
    assert.equal(history.recentCount(), 2);
  });

  it('a loop ends after its cooldown and forgets the crashes, keeping the last error', () => {
    const { history, advance } = setup();
    for (let crash = 0; crash < 3; crash += 1) history.record(`crash ${crash}`);
    advance(4_999);
    assert.equal(history.inLoop(), true);
    advance(1);
    assert.equal(history.inLoop(), false);
    assert.equal(history.recentCount(), 0);
    assert.equal(history.loopUntil(), undefined);
    assert.equal(history.lastError(), 'crash 2');
    history.record('again');
    assert.equal(history.backoffRemaining(), 100, 'the consecutive count restarted');
  });

  it('reset clears the loop, the crashes and the backoff at once', () => {
    const { history } = setup();
    for (let crash = 0; crash < 3; crash += 1) history.record(`crash ${crash}`);
    assert.ok(history.backoffRemaining() > 0);
    history.reset();
    assert.equal(history.inLoop(), false);
    assert.equal(history.backoffRemaining(), 0);
    assert.equal(history.recentCount(), 0);
  });

  it('noteError records why without a crash or a backoff', () => {
    const { history } = setup();
    history.noteError('bubblewrap is not available');
    assert.equal(history.lastError(), 'bubblewrap is not available');
    assert.equal(history.backoffRemaining(), 0);
    assert.equal(history.recentCount(), 0);
  });

  it('names the plugin as it is called when the error is made', () => {
    const { history, subject } = setup();
    for (let crash = 0; crash < 3; crash += 1) history.record('x');
    subject.pluginName = 'weather-renamed';
    assert.match(history.loopError().message, /plugin 'weather-renamed'/);
  });
});
