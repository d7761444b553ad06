import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../core/logger.ts';
import type { UpstreamConnection } from '../upstream-connection.ts';
import type { UpstreamSpecInput } from '../types.ts';
import { healthOf } from './health-report.ts';
import { createEntryRegistry } from './registry.ts';
import { resolveSettings } from './settings.ts';
import type { Entry, Instance } from './state.ts';

function spec(overrides: Record<string, unknown> = {}): UpstreamSpecInput {
  return { pluginId: 'p1', pluginName: 'weather', version: '1.0.0', trustLevel: 'OFFICIAL', transport: 'stdio', command: 'node', env: { API_KEY: 'secret-value-1' }, ...overrides } as UpstreamSpecInput;
}

function setup() {
  let now = 50_000;
  const clock = { now: () => now };
  const stopped: Array<{ instance: Instance; why: string }> = [];
  const settings = resolveSettings({ restartBackoff: { initialMs: 100 }, crashLoop: { maxCrashes: 2, windowMs: 10_000, cooldownMs: 60_000 }, defaultTimeoutMs: 5_000 });
  const registry = createEntryRegistry({
    settings,
    clock,
    logger: silentLogger,
    stop: async (instance, why) => {
      stopped.push({ instance, why });
    },
  });
  return { registry, settings, stopped, advance: (ms: number) => (now += ms) };
}

/** An instance in a given state, with a fake connection carrying only a pid. */
function addInstance(entry: Entry, state: Instance['state'], options: { inFlight?: number; pid?: number } = {}): Instance {
  const instance: Instance = {
    entry,
    state,
    ready: new Promise(() => undefined),
    connection: options.pid === undefined ? undefined : ({ pid: options.pid, isOpen: () => true } as unknown as UpstreamConnection),
    inFlight: options.inFlight ?? 0,
    holds: 0,
    lastUsedAt: 0,
    idleTimer: undefined,
    endReason: undefined,
    retire: false,
    toolListChanges: 0,
  };
  entry.instances.push(instance);
  return instance;
}

describe('entry registry: one entry per plugin version', () => {
  it('gives the same entry for the same version and a new one per version', () => {
    const { registry } = setup();
    const input = spec();
    const entry = registry.resolve(input);
    assert.equal(registry.resolve(input), entry);
    assert.equal(registry.resolve(spec()), entry, 'an equal spec in another object is the same settings');
    const other = registry.resolve(spec({ version: '2.0.0' }));
    assert.notEqual(other, entry);
    assert.deepEqual(registry.forPlugin('p1').map((item) => item.key), ['p1@1.0.0', 'p1@2.0.0']);
    assert.deepEqual(registry.forPlugin('p2'), []);
  });

  it('refuses an invalid spec with invalid_input', () => {
    const { registry } = setup();
    assert.throws(() => registry.resolve(spec({ transport: 'carrier-pigeon' })), { code: 'invalid_input' });
    assert.deepEqual(registry.all(), []);
  });

  it('new settings for the same version retire its connections: idle ones stop now, busy ones once done', () => {
    const { registry, stopped } = setup();
    const entry = registry.resolve(spec());
    const idle = addInstance(entry, 'ready', { pid: 11 });
    const busy = addInstance(entry, 'ready', { pid: 12, inFlight: 1 });
    entry.annotations = new Map();
    const { breakers, crashes, limits } = entry;
    assert.equal(registry.resolve(spec({ env: { API_KEY: 'secret-value-2' } })), entry);
    assert.deepEqual(entry.spec.transport === 'stdio' && entry.spec.env, { API_KEY: 'secret-value-2' });
    assert.doesNotMatch(entry.redact('key secret-value-2'), /secret-value-2/, 'the redactor knows the new credential');
    assert.deepEqual(stopped.map((item) => [item.instance, item.why]), [[idle, 'settings changed']]);
    assert.equal(idle.retire && busy.retire, true);
    assert.equal(entry.annotations, undefined, 'annotations are listed again under the new settings');
    assert.equal(entry.limits, limits, 'unchanged limits keep their limiters: tokens taken and slots held carry over');
    registry.resolve(spec({ execution: { rateLimits: { plugin: { requestsPerMinute: 60 } } } }));
    assert.notEqual(entry.limits, limits, 'new limiters for new limits');
    assert.equal(entry.breakers, breakers, 'failures are not forgotten by a credential rotation');
    assert.equal(entry.crashes, crashes);
  });

  it('versions and slots of one plugin share its limiters while their limits agree', () => {
    const { registry } = setup();
    const execution = { concurrency: { plugin: 1 } };
    const stable = registry.resolve(spec({ execution }));
    const canary = registry.resolve(spec({ version: '2.0.0+green', execution }));
    assert.notEqual(stable, canary, 'each version has its own entry');
    assert.equal(canary.limits, stable.limits, 'one cap of 1 for the plugin, not one per version');
    assert.notEqual(registry.resolve(spec({ pluginId: 'p2', execution })).limits, stable.limits, 'another plugin has its own');
  });

  it('live() lists the instances of every entry that are not stopping', () => {
    const { registry } = setup();
    const first = registry.resolve(spec());
    const second = registry.resolve(spec({ pluginId: 'p2' }));
    const ready = addInstance(first, 'ready', { pid: 1 });
    addInstance(first, 'stopping', { pid: 2 });
    const starting = addInstance(second, 'starting');
    assert.deepEqual(registry.live(), [ready, starting]);
  });
});

describe('health report of one entry', () => {
  it('an unused entry is idle with a full score and no breakers of tools', () => {
    const { registry, settings } = setup();
    const health = healthOf(registry.resolve(spec()), settings);
    assert.equal(health.state, 'idle');
    assert.equal(health.pid, undefined);
    assert.deepEqual(health.pids, []);
    assert.equal(health.calls, 0);
    assert.equal(health.breaker, 'closed');
    assert.deepEqual(health.toolBreakers, {});
    assert.equal(health.recentCrashes, 0);
    assert.equal(health.crashLoopUntil, undefined);
  });

  it('moves through starting, running, backoff and crash-loop', () => {
    const { registry, settings, advance } = setup();
    const entry = registry.resolve(spec());
    const starting = addInstance(entry, 'starting');
    assert.equal(healthOf(entry, settings).state, 'starting');
    starting.state = 'ready';
    starting.connection = { pid: 4242, isOpen: () => true } as unknown as UpstreamConnection;
    const running = healthOf(entry, settings);
    assert.equal(running.state, 'running');
    assert.deepEqual([running.pid, running.pids, running.processes], [4242, [4242], 1]);
    entry.instances.length = 0;
    entry.crashes.record('exit code 1');
    const backoff = healthOf(entry, settings);
    assert.deepEqual([backoff.state, backoff.recentCrashes, backoff.lastError], ['backoff', 1, 'exit code 1']);
    advance(100);
    assert.equal(healthOf(entry, settings).state, 'idle', 'the backoff is over');
    entry.crashes.record('exit code 2');
    const loop = healthOf(entry, settings);
    assert.equal(loop.state, 'crash-loop');
    assert.equal(loop.crashLoopUntil?.getTime(), 50_100 + 60_000);
    assert.ok(loop.score < running.score, 'a crash loop lowers the score');
  });

  it("reports every tool breaker and the plugin breaker's state", () => {
    const { registry, settings } = setup();
    const entry = registry.resolve(spec({ execution: { circuitBreakerConfig: { failureThreshold: 1 } } }));
    const decision = entry.breakers.tool('forecast').tryAcquire();
    assert.ok(decision.allowed);
    decision.permit.release('failure');
    entry.breakers.tool('alerts');
    assert.deepEqual(healthOf(entry, settings).toolBreakers, { forecast: 'open', alerts: 'closed' });
  });
});
