/**
 * Every upstream call becomes a persisted event (runtime issue "Health"): a real supervisor
 * calls the real behaviour fixture server, its `onCall` feeds the recorder, and the plugin
 * health source reads back the live process state (breakers, crash loop, score) beside the
 * aggregates stored in plugin_call_events, on every backend.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { createCatalogService } from '../../src/catalog/index.ts';
import { createSupervisor, type Supervisor } from '../../src/runtime/supervisor.ts';
import { createCallEventRecorder, type CallEventRecorder } from '../../src/runtime/call-event-recorder.ts';
import { createPluginService } from '../../src/plugins/service.ts';
import { createSecretBox } from '../../src/plugins/secret-box.ts';
import { createPluginHealth, type PluginHealthEntry, type PluginHealthSource } from '../../src/plugins/health.ts';
import { fixtureSpec, leftovers } from './helpers.ts';

describeEachBackend('call events from a real supervisor', (backend) => {
  let db: Database;
  let recorder: CallEventRecorder;
  let supervisor: Supervisor;
  let health: PluginHealthSource;
  let cacheDir: string;
  const ids: Record<string, string> = {};

  const entry = async (name: string, window = '15m'): Promise<PluginHealthEntry> => {
    const report = await health.report({ window });
    const found = report.plugins.find((plugin) => plugin.name === name);
    assert.ok(found, `${name} is in the report`);
    return found;
  };
  const specFor = (name: string, extra: Parameters<typeof fixtureSpec>[1] = {}) => fixtureSpec(ids[name]!, { pluginName: name, ...extra });

  before(async () => {
    db = await backend.open();
    for (const name of ['steady', 'broken', 'looping', 'idle']) {
      ids[name] = (await db.query<{ id: string }>("INSERT INTO plugins (name, version) VALUES ($1, '1.0.0') RETURNING id", [name])).rows[0]!.id;
    }
    recorder = createCallEventRecorder({ db, flushMs: 50 });
    supervisor = createSupervisor({
      onCall: (event) => recorder.record(event),
      stopGraceMs: 200,
      breakerDefaults: { failureThreshold: 2, timeout: 60_000 },
      crashLoop: { maxCrashes: 3, windowMs: 60_000, cooldownMs: 60_000 },
      restartBackoff: { initialMs: 10, maxMs: 20 },
    });
    cacheDir = await mkdtemp(join(tmpdir(), 'quiver-call-events-'));
    const plugins = createPluginService({ commandEnv: process.env, db, catalog: createCatalogService({ db }), supervisor, cacheDir, secrets: createSecretBox(randomBytes(32)) });
    health = createPluginHealth({ db, plugins, supervisor, beforeRead: () => recorder.flush() });
  });
  after(async () => {
    await supervisor.close();
    await recorder.close();
    assert.deepEqual(leftovers(supervisor.id), []);
    await db.close();
    await rm(cacheDir, { recursive: true, force: true });
  });

  it('records success, tool errors and timeouts with their classes; live and persisted views agree', async () => {
    const spec = specFor('steady');
    for (const message of ['a', 'b', 'c']) await supervisor.callTool(spec, 'echo', { message });
    const failed = await supervisor.callTool(spec, 'fail');
    assert.equal(failed.isError, true);
    await assert.rejects(supervisor.callTool(spec, 'slow', { ms: 5_000 }, { timeoutMs: 300 }), { code: 'timeout' });

    const steady = await entry('steady');
    assert.equal(steady.status, 'active');
    assert.deepEqual(
      { calls: steady.calls.calls, successes: steady.calls.successes, errors: steady.calls.errors, timeouts: steady.calls.timeouts, rejected: steady.calls.rejected },
      { calls: 5, successes: 3, errors: 1, timeouts: 1, rejected: 0 },
    );
    assert.deepEqual(steady.calls.errorClasses, { timeout: 1, tool_error: 1 });
    assert.equal(steady.calls.successRate, 0.6);
    // percentile_cont interpolates: with 5 calls p95 lies 80 % of the way from the 4th to the
    // slowest, so a timed-out call of ≥ 300 ms lifts it to at least ~240 ms.
    assert.ok(steady.calls.p95LatencyMs! >= 0.8 * 300 - 5, `the timed-out call counts with its latency (p95 ${steady.calls.p95LatencyMs})`);
    assert.ok(typeof steady.calls.score === 'number' && steady.calls.score < 100);
    // The slow call answers the ping after its timeout, so the process stays up.
    assert.equal(steady.process?.state, 'running');
    assert.equal(typeof steady.process?.pid, 'number');
    assert.equal(steady.process?.breaker, 'closed');
    assert.equal(steady.process?.crashLoop, false);
    assert.equal(steady.process?.calls, 5);
    assert.equal(steady.process?.failures, 2);

    const tools = await health.toolCalls('steady', { window: '1h' });
    assert.equal(tools.plugin.id, ids['steady']);
    assert.deepEqual(
      tools.tools.map((tool) => [tool.toolName, tool.calls, tool.successes, tool.errors, tool.timeouts]),
      [['echo', 3, 3, 0, 0], ['fail', 1, 0, 1, 0], ['slow', 1, 0, 0, 1]],
    );
    assert.equal(tools.tools[0]!.successRate, 1);

    const idle = await entry('idle');
    assert.equal(idle.process, null, 'never started in this process');
    assert.equal(idle.calls.calls, 0);
    assert.equal(idle.calls.successRate, null);
    assert.equal(idle.calls.score, null);
  });

  it('shows an open breaker for a plugin whose calls keep crashing it, and the rejected calls', async () => {
    const spec = specFor('broken');
    await assert.rejects(supervisor.callTool(spec, 'crash'));
    await assert.rejects(supervisor.callTool(spec, 'crash'));
    await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'x' }), { code: 'circuit_open' });

    const broken = await entry('broken');
    assert.equal(broken.process?.breaker, 'open');
    assert.equal(broken.process?.crashLoop, false);
    assert.equal(broken.process?.recentCrashes, 2);
    assert.match(broken.process?.lastError ?? '', /stopped unexpectedly|exit/i);
    assert.ok(broken.process!.score <= 50, `an open breaker halves the score (${broken.process!.score})`);
    assert.equal(broken.calls.errors, 2);
    assert.equal(broken.calls.rejected, 1);
    assert.equal(broken.calls.errorClasses['circuit_open'], 1);
    assert.equal(broken.calls.successRate, 0);
  });

  it('shows a crash loop for a plugin that dies on start', async () => {
    // Its breaker never opens, so the crash-loop stop is what ends the restarts.
    const spec = specFor('looping', { env: { QUIVER_FIXTURE_MODE: 'crash-on-start' }, execution: { circuitBreakerConfig: { failureThreshold: 100 } } });
    for (let attempt = 0; attempt < 10; attempt += 1) {
      await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'x' }));
      if (supervisor.health().some((h) => h.pluginId === ids['looping'] && h.state === 'crash-loop')) break;
    }
    await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'x' }), /crash loop/);

    const looping = await entry('looping');
    assert.equal(looping.process?.state, 'crash-loop');
    assert.equal(looping.process?.crashLoop, true);
    assert.ok(looping.process!.crashLoopUntil instanceof Date && looping.process!.crashLoopUntil.getTime() > Date.now());
    assert.equal(looping.process?.score, 0);
    assert.ok(looping.process!.recentCrashes >= 3);
    assert.ok(looping.calls.errors >= 3, JSON.stringify(looping.calls));
    assert.ok(looping.calls.rejected >= 1);
    assert.ok(looping.calls.errorClasses['unavailable']! >= 1, JSON.stringify(looping.calls.errorClasses));
  });

  it('restricts the report to visible plugins or one plugin, and validates the window', async () => {
    const visible = await health.report({ window: '24h', visible: new Set(['steady']) });
    assert.deepEqual(visible.plugins.map((plugin) => plugin.name), ['steady']);
    assert.equal(visible.window, '24h');
    assert.equal(visible.until.getTime() - visible.since.getTime(), 24 * 3_600_000 + 1);
    const one = await health.report({ plugin: ids['broken'] });
    assert.deepEqual(one.plugins.map((plugin) => plugin.name), ['broken']);
    await assert.rejects(health.report({ plugin: 'broken', visible: new Set(['steady']) }), { code: 'not_found' });
    await assert.rejects(health.report({ plugin: 'nope' }), { code: 'not_found' });
    for (const window of ['0m', '1w', '90', '1h ', '32d', '-1h']) {
      await assert.rejects(health.report({ window }), { code: 'invalid_input' }, window);
    }
    // The calls of the first test are seconds old: a one-minute window still holds them.
    const tools = await health.toolCalls('steady', { window: '1m' });
    assert.equal(tools.tools.length, 3);
  });
});
