import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../core/logger.ts';
import { circuitBreakerConfigSchema, parseUpstreamSpec } from '../types.ts';
import { admitCall, type Admission } from './admission.ts';
import { createPluginBreakers } from './breakers.ts';
import { createCallLimits } from './call-limits.ts';
import { createCrashHistory } from './crash-history.ts';

function setup(execution: Record<string, unknown> = {}) {
  let now = 0;
  const clock = { now: () => now };
  const spec = parseUpstreamSpec({ pluginId: 'p1', pluginName: 'weather', version: '1.0.0', trustLevel: 'OFFICIAL', transport: 'stdio', command: 'node', execution });
  const entry = {
    spec,
    crashes: createCrashHistory(() => spec, { backoff: { initialMs: 100, maxMs: 1_000 }, crashLoop: { maxCrashes: 1, windowMs: 1_000, cooldownMs: 1_000 } }, clock, silentLogger),
    breakers: createPluginBreakers(circuitBreakerConfigSchema.parse({ failureThreshold: 1, successThreshold: 1, timeout: 1_000, halfOpenRequests: 1 }), clock),
    limits: createCallLimits(spec, clock),
  };
  return { entry, advance: (ms: number) => (now += ms) };
}

/** In-memory limits decide at once: no promise, so no database round trip on this path. */
function decided(admission: Admission | Promise<Admission>): Admission {
  assert.ok(!(admission instanceof Promise), 'in-memory admission is synchronous');
  return admission as Admission;
}

function refusal(pending: Admission | Promise<Admission>): { code: string; details: unknown } {
  const admission = decided(pending);
  assert.equal(admission.admitted, false, 'expected a refusal');
  const error = (admission as { error: { code: string; details: unknown } }).error;
  return { code: error.code, details: error.details };
}

function admitted(pending: Admission | Promise<Admission>) {
  const admission = decided(pending);
  assert.equal(admission.admitted, true, 'expected the call to be admitted');
  return (admission as Extract<Admission, { admitted: true }>).permits;
}

describe('admission: crash loop → plugin breaker → tool breaker → token buckets', () => {
  it('admits a call when nothing is limited', () => {
    const { entry } = setup();
    admitted(admitCall(entry, 'forecast')).release('success', 'success');
    assert.equal(entry.breakers.plugin.state(), 'closed');
  });

  it('refuses during a crash loop before taking any breaker permit', () => {
    const { entry } = setup();
    entry.crashes.record('boom');
    assert.equal(refusal(admitCall(entry, 'forecast')).code, 'unavailable');
    assert.equal(entry.breakers.plugin.snapshot().inFlightTrials, 0);
    assert.deepEqual(entry.breakers.toolStates(), {}, 'no tool breaker was even made');
  });

  it('refuses with circuit_open (scope plugin) while the plugin breaker is open', () => {
    const { entry } = setup();
    admitted(admitCall(entry, 'forecast')).release('failure', 'success');
    const { code, details } = refusal(admitCall(entry, 'forecast'));
    assert.equal(code, 'circuit_open');
    assert.deepEqual(details, { pluginId: 'p1', scope: 'plugin', retryAfterMs: 1_000 });
  });

  it('a tool breaker refusal gives the plugin half-open trial back uncounted', () => {
    const { entry, advance } = setup();
    admitted(admitCall(entry, 'forecast')).release('failure', 'success'); // plugin breaker opens
    advance(1_000); // plugin half-open: one trial at a time
    admitted(admitCall(entry, 'forecast')).release('ignored', 'failure'); // tool breaker opens
    const { code, details } = refusal(admitCall(entry, 'forecast'));
    assert.equal(code, 'circuit_open');
    assert.deepEqual(details, { pluginId: 'p1', tool: 'forecast', scope: 'tool', retryAfterMs: 1_000 });
    assert.equal(entry.breakers.plugin.snapshot().inFlightTrials, 0, 'the plugin trial was given back');
    // The plugin's only trial is free again for another tool, and its success closes the breaker.
    admitted(admitCall(entry, 'other')).release('success', 'success');
    assert.equal(entry.breakers.plugin.state(), 'closed');
  });

  it('refuses with rate_limited when a bucket is empty and returns both permits', () => {
    const { entry, advance } = setup({ rateLimits: { tools: { forecast: { requestsPerMinute: 60, burst: 1 } } } });
    admitted(admitCall(entry, 'forecast')).release('failure', 'failure');
    advance(1_000); // half-open: exactly one trial for the plugin and for the tool
    // The bucket refilled one token by now; spend it on a trial we give back, then the next is refused.
    admitted(admitCall(entry, 'forecast')).release('ignored', 'ignored');
    const { code, details } = refusal(admitCall(entry, 'forecast'));
    assert.equal(code, 'rate_limited');
    assert.deepEqual(details, { pluginId: 'p1', tool: 'forecast', retryAfterMs: 1_000 });
    // Had the refusal kept the trials, both half-open breakers would refuse the next call.
    assert.equal(entry.breakers.plugin.snapshot().inFlightTrials, 0);
    assert.equal(entry.breakers.tool('forecast').snapshot().inFlightTrials, 0);
    admitted(admitCall(entry, 'other')).release('success', 'success');
  });
});
