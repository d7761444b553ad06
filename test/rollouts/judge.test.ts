/**
 * The pure parts of rollouts (issue #11): the rollback judge (seed 000 §5.1–5.2) and the
 * per-session routing. No I/O: stats in, verdict out; session keys in, slot out.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOf, defaultRolloutSettings, healthScore, judge, routesToCanary, type SlotStats } from '../../src/rollouts/index.ts';

const stats = (calls: number, failures: number, p95Ms: number | null = 20, extra: Partial<SlotStats> = {}): SlotStats => ({ calls, failures, breakerOpen: 0, crashes: 0, p50Ms: p95Ms === null ? null : p95Ms / 2, p95Ms, ...extra });
const settings = { ...defaultRolloutSettings, minSamples: 20 };

describe('rollback judge', () => {
  it('waits while the canary has fewer calls than the minimum, even with failures', () => {
    const verdict = judge(stats(19, 10), stats(500, 0), settings);
    assert.equal(verdict.verdict, 'waiting');
    assert.deepEqual(verdict.reasons, []);
  });

  it('rolls back on an error rate beyond the allowed delta, not within it', () => {
    const bad = judge(stats(30, 10), stats(300, 3), settings);
    assert.equal(bad.verdict, 'degraded');
    assert.match(bad.reasons[0]!, /error rate 33\.3 % on the canary vs 1\.0 %/);
    assert.equal(judge(stats(30, 3), stats(300, 3), settings).verdict, 'healthy', '10 % vs 1 %: within +10 points');
  });

  it('takes a stable slot with too few calls as error-free (the strict reading)', () => {
    assert.equal(judge(stats(20, 3), stats(5, 5), settings).verdict, 'degraded');
  });

  it('rolls back on latency only when both the ratio and the absolute delta are exceeded', () => {
    assert.equal(judge(stats(40, 0, 450), stats(400, 0, 200), settings).verdict, 'degraded');
    assert.equal(judge(stats(40, 0, 90), stats(400, 0, 20), settings).verdict, 'healthy', '4.5× but only 70 ms slower');
    assert.equal(judge(stats(40, 0, 350), stats(400, 0, 200), settings).verdict, 'healthy', '150 ms slower but under 2×');
    assert.equal(judge(stats(40, 0, 900), stats(10, 0, 20), settings).verdict, 'healthy', 'no latency verdict without stable samples');
  });

  it('rolls back at once on an open breaker or a crash, whatever the sample size', () => {
    const breaker = judge(stats(2, 2, 20, { breakerOpen: 1 }), stats(100, 0), settings);
    assert.equal(breaker.verdict, 'degraded');
    assert.match(breaker.reasons[0]!, /circuit breaker opened/);
    assert.match(judge(stats(1, 1, 20, { crashes: 1 }), stats(100, 0), settings).reasons[0]!, /crashed/);
  });

  it('scores health from the success share, less for being slower, at most 40 with breaker refusals', () => {
    assert.equal(healthScore(stats(0, 0), stats(10, 0)), 100);
    assert.equal(healthScore(stats(100, 5, 20), stats(100, 0, 20)), 95);
    assert.equal(healthScore(stats(100, 0, 40), stats(100, 0, 20)), 80);
    assert.equal(healthScore(stats(100, 0, 20, { breakerOpen: 3 }), stats(100, 0, 20)), 40);
  });
});

describe('slot routing', () => {
  const keys = Array.from({ length: 20_000 }, (_, index) => `session-${index}`);
  const route = (percent: number, tools = ['add']) => ({ rolloutId: 'r1', pluginId: 'plugin-a', canaryPercent: percent, canaryTools: new Set(tools) });

  it('sends about the step percent of sessions to the canary, the same ones on every call', () => {
    for (const percent of [10, 50]) {
      const share = keys.filter((key) => routesToCanary(route(percent), key, 'add')).length / keys.length;
      assert.ok(Math.abs(share - percent / 100) < 0.015, `${percent} %: measured ${(share * 100).toFixed(2)} %`);
    }
    assert.equal(bucketOf('plugin-a', 'session-7'), bucketOf('plugin-a', 'session-7'));
    assert.notEqual(bucketOf('plugin-a', 'session-7'), bucketOf('plugin-b', 'session-7'));
  });

  it('keeps a canary session on the canary when the share grows', () => {
    const at10 = keys.filter((key) => routesToCanary(route(10), key, 'add'));
    assert.ok(at10.every((key) => routesToCanary(route(50), key, 'add')));
    assert.ok(keys.every((key) => routesToCanary(route(100), key, 'add')));
    assert.ok(keys.every((key) => !routesToCanary(route(0), key, 'add')));
  });

  it('sends a tool the canary does not serve unchanged to the stable slot', () => {
    const canaryKey = keys.find((key) => routesToCanary(route(50), key, 'add'))!;
    assert.equal(routesToCanary(route(50), canaryKey, 'product'), false);
    assert.equal(routesToCanary(route(100, []), canaryKey, 'add'), false);
  });
});
