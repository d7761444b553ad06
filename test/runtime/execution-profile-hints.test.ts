/**
 * Issue #29: the rest of the execution profile reaches the runtime. `retryOn` decides which
 * failures are retried (with a real plugin process: a crash, a tool error), `typicalLatency` gives
 * the call timeout and `resourceIntensity` the concurrency cap where the PID names no number.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../../src/core/errors.ts';
import { executionFromPid, TIMEOUT_BY_LATENCY } from '../../src/runtime/execution-profile.ts';
import { createSupervisor, type CallEvent } from '../../src/runtime/index.ts';
import { createCapturingLogger, firstText, fixtureSpec } from './helpers.ts';

describe('typicalLatency, resourceIntensity and retryOn mapped (pure)', () => {
  it('a latency bucket gives the timeout only where the PID names none', () => {
    assert.equal(executionFromPid({ execution: { typicalLatency: 'instant' } }).timeoutRecommendation, 10_000);
    assert.equal(executionFromPid({ execution: { typicalLatency: 'slow' } }).timeoutRecommendation, 120_000);
    assert.equal(executionFromPid({ execution: { typicalLatency: 'slow', timeoutRecommendation: 700 } }).timeoutRecommendation, 700, 'an explicit number wins');
    assert.equal(executionFromPid({ execution: { typicalLatency: 'glacial' } }).timeoutRecommendation, undefined, 'an unknown bucket sets nothing');
  });

  it('a resource level gives the concurrency cap only where no maxConcurrent or model does', () => {
    assert.equal(executionFromPid({ execution: { resourceIntensity: 'high' } }).concurrency?.plugin, 2);
    assert.equal(executionFromPid({ execution: { resourceIntensity: 'medium' } }).concurrency?.plugin, 8);
    assert.equal(executionFromPid({ execution: { resourceIntensity: 'low' } }).concurrency, undefined);
    assert.equal(executionFromPid({ execution: { resourceIntensity: 'high' }, safety: { rateLimits: { maxConcurrent: 5 } } }).concurrency?.plugin, 5);
    assert.equal(executionFromPid({ execution: { resourceIntensity: 'high', concurrencyModel: 'sequential' } }).concurrency?.plugin, 1);
  });

  it('retryOn is carried into the retry policy; a class the runtime does not know is refused by name', () => {
    assert.deepEqual(executionFromPid({ execution: { retryPolicy: { maxRetries: 1, retryOn: ['timeout', 'tool_error', 'timeout'] } } }).retryPolicy?.retryOn, ['timeout', 'tool_error']);
    assert.throws(
      () => executionFromPid({ execution: { retryPolicy: { maxRetries: 1, retryOn: ['ECONNRESET'] } } }),
      (error) => isQuiverError(error, 'invalid_input') && /execution\.retryPolicy\.retryOn\.0: expected one of timeout, unavailable, upstream_error, tool_error/.test(error.message),
    );
  });
});

describe('retryOn and typicalLatency in the supervisor (real plugin processes)', () => {
  async function withSupervisor(body: (supervisor: ReturnType<typeof createSupervisor>, events: CallEvent[]) => Promise<void>): Promise<void> {
    const events: CallEvent[] = [];
    const supervisor = createSupervisor({ stopGraceMs: 100, startTimeoutMs: 20_000, restartBackoff: { initialMs: 5 }, logger: createCapturingLogger(), onCall: (event) => events.push(event) });
    try {
      await body(supervisor, events);
    } finally {
      await supervisor.close();
    }
  }
  // The fixture's once-markers live in $HOME, the plugin's own state folder: a plugin id per case starts fresh.
  const spec = (id: string, retryOn: string[] | undefined) => fixtureSpec(id, { execution: executionFromPid({ execution: { retryPolicy: { maxRetries: 2, backoffMs: 10, ...(retryOn ? { retryOn } : {}) } } }) });

  it('a crash is retried when retryOn names unavailable, and not when it names only timeouts', async () => {
    await withSupervisor(async (supervisor, events) => {
      await assert.rejects(supervisor.callTool(spec('only-timeouts', ['timeout']), 'crash-once-read'), (error) => isQuiverError(error, 'unavailable'));
      assert.equal(events.at(-1)?.attempts, 1);
      assert.equal(firstText(await supervisor.callTool(spec('crashes', ['unavailable']), 'crash-once-read')), 'crash-once-read ok');
      assert.equal(events.at(-1)?.attempts, 2);
    });
  });

  it('a tool error is retried only when retryOn names tool_error', async () => {
    await withSupervisor(async (supervisor, events) => {
      const unnamed = await supervisor.callTool(spec('default-classes', undefined), 'fail-once-read');
      assert.equal(unnamed.isError, true, 'by default a tool error is the answer');
      assert.equal(events.at(-1)?.attempts, 1);
      assert.equal(firstText(await supervisor.callTool(spec('tool-errors', ['tool_error']), 'fail-once-read')), 'fail-once-read ok');
      assert.equal(events.at(-1)?.attempts, 2);
    });
  });

  it("an 'instant' plugin's call times out at the bucket's timeout, not the 30 s default", async () => {
    await withSupervisor(async (supervisor) => {
      const instant = fixtureSpec('instant', { execution: executionFromPid({ execution: { typicalLatency: 'instant' } }) });
      assert.equal(instant.execution?.['timeoutRecommendation'], TIMEOUT_BY_LATENCY.instant);
      // 25 s would finish under the default; the bucket's 10 s stops it.
      await assert.rejects(supervisor.callTool(instant, 'slow', { ms: 25_000 }), (error) => isQuiverError(error, 'timeout'));
    });
  });
});
