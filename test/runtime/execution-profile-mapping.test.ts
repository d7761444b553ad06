/**
 * Issue #11: how a PID's execution profile and rate limits map onto the runtime's settings
 * (pure; the install path is exercised in execution-profile.test.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../../src/core/errors.ts';
import { EXECUTION_DEFAULTS, effectiveExecution, executionFromPid } from '../../src/runtime/execution-profile.ts';

describe('executionFromPid', () => {
  it('is empty without a PID or without a profile, so every default applies', () => {
    assert.deepEqual(executionFromPid(undefined), {});
    assert.deepEqual(executionFromPid({ version: '1.0', pluginId: 'x', semantic: {} }), {});
    const effective = effectiveExecution(executionFromPid(undefined));
    assert.equal(effective.timeoutMs, EXECUTION_DEFAULTS.timeoutMs);
    assert.deepEqual(effective.circuitBreaker, { failureThreshold: 5, successThreshold: 2, timeout: 30_000, halfOpenRequests: 1 });
    assert.equal(effective.retryPolicy.maxAttempts, 1);
    assert.equal(effective.rateLimit, null);
    assert.equal(effective.maxConcurrent, null);
    assert.deepEqual(effective.fromPid, []);
  });

  it('maps retries, breaker, the tightest rate window and the concurrency cap', () => {
    const execution = executionFromPid({
      execution: {
        timeoutRecommendation: 5_000,
        retryPolicy: { maxRetries: 2, backoffMs: 1_000 },
        circuitBreakerConfig: { failureThreshold: 3 },
        concurrencyModel: 'parallel',
      },
      safety: { rateLimits: { requestsPerSecond: 10, requestsPerHour: 300, maxConcurrent: 4 } },
    });
    assert.equal(execution.timeoutRecommendation, 5_000);
    assert.deepEqual(execution.retryPolicy, { maxAttempts: 3, initialDelayMs: 1_000, maxDelayMs: 2_000, backoffMultiplier: 2 });
    assert.equal(execution.circuitBreakerConfig?.failureThreshold, 3);
    assert.equal(execution.circuitBreakerConfig?.timeout, 30_000, 'unset breaker fields keep their defaults');
    assert.equal(execution.rateLimits?.plugin?.requestsPerMinute, 5, '300 per hour is tighter than 10 per second');
    assert.equal(execution.concurrency?.plugin, 4);
  });

  it('caps a sequential or exclusive plugin at one call in flight', () => {
    assert.equal(executionFromPid({ execution: { concurrencyModel: 'sequential' } }).concurrency?.plugin, 1);
    assert.equal(executionFromPid({ execution: { concurrencyModel: 'exclusive' }, safety: { rateLimits: { maxConcurrent: 8 } } }).concurrency?.plugin, 1);
    const burst = executionFromPid({ safety: { rateLimits: { requestsPerMinute: 120, burst: 7 } } });
    assert.deepEqual(burst.rateLimits?.plugin, { requestsPerMinute: 120, burst: 7 });
  });

  it('refuses values the runtime cannot apply, naming each by its PID path', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ execution: { timeoutRecommendation: 0 } }, /execution\.timeoutRecommendation/],
      [{ execution: { circuitBreakerConfig: { failureThreshold: -1 } } }, /execution\.circuitBreakerConfig\.failureThreshold/],
      [{ execution: { retryPolicy: { maxRetries: 10 } } }, /execution\.retryPolicy\.maxRetries/],
      [{ safety: { rateLimits: { requestsPerMinute: 0 } } }, /safety\.rateLimits\.requestsPerMinute/],
    ];
    for (const [pid, message] of cases) {
      assert.throws(() => executionFromPid(pid), (error) => isQuiverError(error, 'invalid_input') && message.test(error.message), JSON.stringify(pid));
    }
  });
});
