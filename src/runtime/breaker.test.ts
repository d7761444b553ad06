import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createCircuitBreaker, type BreakerPermit } from './breaker.ts';
import { circuitBreakerConfigSchema } from './types.ts';

function setup(overrides: Record<string, number> = {}) {
  let now = 1_000;
  const clock = { now: () => now };
  const breaker = createCircuitBreaker(circuitBreakerConfigSchema.parse({ failureThreshold: 3, successThreshold: 2, timeout: 1_000, halfOpenRequests: 1, ...overrides }), clock);
  const acquire = (): BreakerPermit => {
    const decision = breaker.tryAcquire();
    assert.equal(decision.allowed, true, 'expected the breaker to allow a call');
    return (decision as { permit: BreakerPermit }).permit;
  };
  return { breaker, acquire, advance: (ms: number) => (now += ms) };
}

describe('circuit breaker (seed 000 §5.2)', () => {
  it('defaults to 5 / 2 / 30 s / 1', () => {
    assert.deepEqual(circuitBreakerConfigSchema.parse({}), { failureThreshold: 5, successThreshold: 2, timeout: 30_000, halfOpenRequests: 1 });
  });

  it('stays closed below the failure threshold and a success resets the count', () => {
    const { breaker, acquire } = setup();
    acquire().release('failure');
    acquire().release('failure');
    acquire().release('success');
    acquire().release('failure');
    acquire().release('failure');
    assert.equal(breaker.state(), 'closed');
    assert.equal(breaker.snapshot().consecutiveFailures, 2);
  });

  it('opens after failureThreshold consecutive failures and rejects with retryAfter', () => {
    const { breaker, acquire, advance } = setup();
    for (let index = 0; index < 3; index += 1) acquire().release('failure');
    assert.equal(breaker.state(), 'open');
    const decision = breaker.tryAcquire();
    assert.equal(decision.allowed, false);
    assert.equal((decision as { retryAfterMs: number }).retryAfterMs, 1_000);
    advance(400);
    assert.equal((breaker.tryAcquire() as { retryAfterMs: number }).retryAfterMs, 600);
  });

  it('half-opens after the timeout and admits only halfOpenRequests trials at a time', () => {
    const { breaker, acquire, advance } = setup();
    for (let index = 0; index < 3; index += 1) acquire().release('failure');
    advance(999);
    assert.equal(breaker.state(), 'open');
    advance(1);
    assert.equal(breaker.state(), 'half-open');
    const trial = acquire();
    assert.equal(breaker.tryAcquire().allowed, false, 'a second concurrent trial is refused');
    trial.release('success');
    assert.equal(breaker.state(), 'half-open', 'one success of two needed');
    acquire().release('success');
    assert.equal(breaker.state(), 'closed');
    assert.equal(breaker.snapshot().consecutiveFailures, 0);
  });

  it('re-opens on a failed trial, with a fresh timeout', () => {
    const { breaker, acquire, advance } = setup();
    for (let index = 0; index < 3; index += 1) acquire().release('failure');
    advance(1_000);
    acquire().release('success');
    acquire().release('failure');
    assert.equal(breaker.state(), 'open');
    advance(999);
    assert.equal(breaker.state(), 'open');
    advance(1);
    assert.equal(breaker.state(), 'half-open');
  });

  it('admits several trials when halfOpenRequests > 1', () => {
    const { breaker, acquire, advance } = setup({ halfOpenRequests: 3, successThreshold: 3 });
    for (let index = 0; index < 3; index += 1) acquire().release('failure');
    advance(1_000);
    const trials = [acquire(), acquire(), acquire()];
    assert.equal(breaker.tryAcquire().allowed, false);
    for (const trial of trials) trial.release('success');
    assert.equal(breaker.state(), 'closed');
  });

  it("an 'ignored' trial gives its slot back without counting", () => {
    const { breaker, acquire, advance } = setup();
    for (let index = 0; index < 3; index += 1) acquire().release('failure');
    advance(1_000);
    acquire().release('ignored');
    assert.equal(breaker.state(), 'half-open');
    assert.equal(breaker.snapshot().halfOpenSuccesses, 0);
    assert.equal(breaker.tryAcquire().allowed, true);
  });

  it("'ignored' outcomes never move a closed breaker", () => {
    const { breaker, acquire } = setup();
    for (let index = 0; index < 10; index += 1) acquire().release('ignored');
    assert.equal(breaker.state(), 'closed');
  });

  it('a slow call admitted while closed cannot decide a later half-open state', () => {
    const { breaker, acquire, advance } = setup();
    const slow = acquire();
    for (let index = 0; index < 3; index += 1) acquire().release('failure');
    advance(1_000);
    assert.equal(breaker.state(), 'half-open');
    slow.release('success');
    assert.equal(breaker.snapshot().halfOpenSuccesses, 0);
    const trial = acquire();
    slow.release('failure');
    assert.equal(breaker.state(), 'half-open');
    trial.release('failure');
    assert.equal(breaker.state(), 'open');
  });

  it('releasing a permit twice counts once', () => {
    const { breaker, acquire } = setup();
    const permit = acquire();
    permit.release('failure');
    permit.release('failure');
    permit.release('failure');
    assert.equal(breaker.snapshot().consecutiveFailures, 1);
  });

  it('reset closes an open breaker at once', () => {
    const { breaker, acquire } = setup();
    for (let index = 0; index < 3; index += 1) acquire().release('failure');
    breaker.reset();
    assert.equal(breaker.state(), 'closed');
    assert.equal(breaker.tryAcquire().allowed, true);
  });

  it('snapshot reports the state fields', () => {
    const { breaker, acquire, advance } = setup();
    for (let index = 0; index < 3; index += 1) acquire().release('failure');
    advance(250);
    const snapshot = breaker.snapshot();
    assert.equal(snapshot.state, 'open');
    assert.equal(snapshot.retryAfterMs, 750);
    assert.equal(typeof snapshot.openedAt, 'number');
  });
});
