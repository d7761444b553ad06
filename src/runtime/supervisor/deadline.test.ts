import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../../core/errors.ts';
import { createDeadline, untilAborted } from './deadline.ts';

// Mocked timers and a clock that moves with them: the deadline fires exactly when time is ticked.
let now = 0;
const clock = { now: () => now };
function tick(ms: number): void {
  now += ms;
  mock.timers.tick(ms);
}
const subject = { pluginId: 'p1', pluginName: 'weather' };

describe('deadline of one request', () => {
  beforeEach(() => {
    now = 0;
    mock.timers.enable({ apis: ['setTimeout'] });
  });
  afterEach(() => mock.timers.reset());

  it('aborts with a timeout naming the plugin and the request when the time runs out', () => {
    const deadline = createDeadline(subject, "tools/call 'forecast'", 1_000, undefined, clock);
    tick(999);
    assert.equal(deadline.signal.aborted, false);
    assert.equal(deadline.remaining(), 1);
    tick(1);
    assert.equal(deadline.signal.aborted, true);
    assert.equal(deadline.timedOut(), true);
    const reason: unknown = deadline.signal.reason;
    assert.ok(isQuiverError(reason));
    assert.equal(reason.code, 'timeout');
    assert.equal(reason.message, "plugin 'weather' did not answer tools/call 'forecast' within 1000 ms");
    assert.deepEqual(reason.details, { pluginId: 'p1', timeoutMs: 1_000 });
  });

  it('a paused deadline does not fire; restart gives the full time again from now', () => {
    const deadline = createDeadline(subject, 'tools/list', 1_000, undefined, clock);
    tick(600);
    deadline.pause();
    tick(5_000); // a slow plugin start
    assert.equal(deadline.signal.aborted, false);
    deadline.restart();
    assert.equal(deadline.remaining(), 1_000);
    tick(999);
    assert.equal(deadline.signal.aborted, false);
    tick(1);
    assert.equal(deadline.timedOut(), true);
  });

  it("the caller's abort is a user 'cancelled' error, not a timeout", () => {
    const outer = new AbortController();
    const deadline = createDeadline(subject, 'tools/list', 1_000, outer.signal, clock);
    outer.abort();
    assert.equal(deadline.timedOut(), false);
    const reason: unknown = deadline.signal.reason;
    assert.ok(isQuiverError(reason));
    assert.equal(reason.code, 'cancelled');
    assert.equal(reason.kind, 'user');
    assert.equal(reason.message, 'tools/list was cancelled by the caller');
  });

  it('an already aborted caller signal cancels at once', () => {
    const outer = new AbortController();
    outer.abort();
    const deadline = createDeadline(subject, 'tools/list', 1_000, outer.signal, clock);
    assert.equal(deadline.signal.aborted, true);
    assert.equal((deadline.signal.reason as { code: string }).code, 'cancelled');
  });

  it('dispose stops the timer and stops following the caller', () => {
    const outer = new AbortController();
    const deadline = createDeadline(subject, 'tools/list', 1_000, outer.signal, clock);
    deadline.dispose();
    tick(2_000);
    outer.abort();
    assert.equal(deadline.signal.aborted, false);
  });
});

describe('untilAborted', () => {
  it('settles like the promise while the signal stays quiet', async () => {
    const controller = new AbortController();
    assert.equal(await untilAborted(Promise.resolve(7), controller.signal), 7);
    await assert.rejects(untilAborted(Promise.reject(new Error('no')), controller.signal), /no/);
  });

  it("rejects with the signal's reason as soon as it aborts, even if the promise never settles", async () => {
    const controller = new AbortController();
    const waiting = untilAborted(new Promise(() => undefined), controller.signal);
    controller.abort(new Error('deadline'));
    await assert.rejects(waiting, /deadline/);
    await assert.rejects(untilAborted(Promise.resolve(1), controller.signal), /deadline/, 'an aborted signal rejects at once');
  });
});
