import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseUpstreamSpec } from '../types.ts';
import { createCallLimits } from './call-limits.ts';
import { requestTimeoutMs, resolveSettings } from './settings.ts';

describe('supervisor settings', () => {
  it('fills in the documented defaults and freezes them', () => {
    const settings = resolveSettings({});
    assert.deepEqual(
      { ...settings, backoff: { ...settings.backoff }, crashLoop: { ...settings.crashLoop }, healthWindow: { ...settings.healthWindow } },
      {
        poolSize: 1,
        maxPoolSize: 8,
        maxProcesses: 32,
        idleTimeoutMs: 300_000,
        defaultTimeoutMs: 30_000,
        startTimeoutMs: 15_000,
        stopGraceMs: 1_000,
        pingIntervalMs: 0,
        pingTimeoutMs: 2_000,
        backoff: { initialMs: 200, maxMs: 10_000 },
        crashLoop: { maxCrashes: 5, windowMs: 60_000, cooldownMs: 300_000 },
        breakerDefaults: undefined,
        healthWindow: { size: undefined, ms: undefined },
      },
    );
    assert.ok(Object.isFrozen(settings) && Object.isFrozen(settings.crashLoop));
  });

  it('clamps the pool size to 1…maxPoolSize and the process cap to at least 1; a negative ping interval is off', () => {
    assert.equal(resolveSettings({ poolSize: 20 }).poolSize, 8);
    assert.equal(resolveSettings({ poolSize: 20, maxPoolSize: 12 }).poolSize, 12);
    assert.equal(resolveSettings({ poolSize: 0 }).poolSize, 1);
    assert.equal(resolveSettings({ maxProcesses: 0 }).maxProcesses, 1);
    assert.equal(resolveSettings({ pingIntervalMs: -5 }).pingIntervalMs, 0);
  });

  it("a request's timeout: the call's own, else the PID's recommendation, else the default", () => {
    const settings = resolveSettings({ defaultTimeoutMs: 7_000 });
    const base = { pluginId: 'p', pluginName: 'p', version: '1', trustLevel: 'OFFICIAL', transport: 'stdio', command: 'node' } as const;
    const plain = parseUpstreamSpec(base);
    const recommended = parseUpstreamSpec({ ...base, execution: { timeoutRecommendation: 3_000 } });
    assert.equal(requestTimeoutMs(plain, settings), 7_000);
    assert.equal(requestTimeoutMs(recommended, settings), 3_000);
    assert.equal(requestTimeoutMs(recommended, settings, 500), 500);
  });
});

describe('call limits of one plugin version', () => {
  const base = { pluginId: 'p', pluginName: 'weather', version: '1', trustLevel: 'OFFICIAL', transport: 'stdio', command: 'node' } as const;
  const clock = { now: () => 0 };

  it('has no limiters when the PID sets none', () => {
    const limits = createCallLimits(parseUpstreamSpec(base), clock);
    assert.deepEqual(limits.buckets('forecast'), []);
    assert.deepEqual(limits.semaphores('forecast'), []);
  });

  it("the plugin's limiter comes first; a named tool's own beats the perTool default; each tool keeps its own", () => {
    const limits = createCallLimits(
      parseUpstreamSpec({
        ...base,
        execution: {
          rateLimits: { plugin: { requestsPerMinute: 600, burst: 10 }, perTool: { requestsPerMinute: 60, burst: 2 }, tools: { forecast: { requestsPerMinute: 60, burst: 5 } } },
          concurrency: { plugin: 4, perTool: 1, tools: { forecast: 3 } },
        },
      }),
      clock,
    );
    const [pluginBucket, forecastBucket] = limits.buckets('forecast');
    assert.deepEqual([pluginBucket?.available(), forecastBucket?.available()], [10, 5]);
    assert.equal(limits.buckets('alerts')[1]?.available(), 2);
    forecastBucket?.take();
    assert.equal(limits.buckets('forecast')[1]?.available(), 4, 'later calls share the same bucket');
    assert.equal(limits.buckets('forecast')[0], pluginBucket, 'every tool shares the plugin bucket');
    const [pluginSemaphore, forecastSemaphore] = limits.semaphores('forecast');
    assert.equal(limits.semaphores('alerts')[0], pluginSemaphore);
    assert.equal(limits.semaphores('forecast')[1], forecastSemaphore);
    assert.notEqual(limits.semaphores('alerts')[1], forecastSemaphore);
  });

  it('concurrency caps per tool only, with no plugin cap, give one semaphore', () => {
    const limits = createCallLimits(parseUpstreamSpec({ ...base, execution: { concurrency: { perTool: 2 } } }), clock);
    assert.equal(limits.semaphores('forecast').length, 1);
  });
});
