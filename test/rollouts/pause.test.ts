/**
 * A paused rollout (issue #11 follow-up): a pause stops advancing, not protecting. Real things:
 * a plugin from a real git repository with one tag per version, a real `quiver serve` (HTTP,
 * its monitor on a short tick), real MCP sessions calling a tool in a loop.
 * - A healthy canary paused past two step windows stays at its step with its traffic share: the
 *   sessions in the canary share keep being served by it, the others by the active version.
 * - A canary that fails every other call, paused as soon as it starts, is still rolled back by
 *   the monitor while paused.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { bucketOf, type RolloutView } from '../../src/rollouts/index.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createTaggedRepo, startTraffic, waitFor, type Traffic } from './helpers.ts';

const WINDOW_MS = 1000;

describeEachBackend('a paused rollout holds its traffic and is still judged (issue #11)', (backend) => {
  let home: string;
  let app: App;
  let server: HttpServer;
  let key: string;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-rollout-pause-'));
    await chmod(home, 0o755);
    const remote = await createTaggedRepo(join(home, 'repo'), [
      { tag: 'v1.0.0', version: '1.0.0', tools: ['add', 'echo'] },
      { tag: 'v2.0.0', version: '2.0.0', tools: ['add', 'echo'] },
      { tag: 'v3.0.0', version: '3.0.0', tools: ['add', 'echo'], failEvery: 2 },
    ]);
    const config = loadConfig({
      QUIVER_HOME: home,
      QUIVER_DATABASE_URL: 'memory://',
      QUIVER_LOG_LEVEL: 'silent',
      QUIVER_VERIFY_ON_INSTALL: 'off',
      QUIVER_ROLLOUT_STEP_WINDOW_MS: String(WINDOW_MS),
      QUIVER_ROLLOUT_TICK_MS: '100',
      // Enough calls that the pause lands before the canary can be judged.
      QUIVER_ROLLOUT_MIN_SAMPLES: '10',
    });
    app = await createApp(config, { db: await backend.open() });
    await app.plugins.add(remote, { name: 'calc', ref: 'v1.0.0' });
    await app.plugins.setWorkspaceExposureMode('default', 'all');
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    key = (await app.apiKeys.create({ name: 'rollout agent', scopes: ['mcp'] })).key;
  });
  after(async () => {
    await server?.close();
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  async function traffic(): Promise<Traffic & { canaries: Set<string> }> {
    const pluginId = (await app.plugins.show('calc')).plugin.id;
    const isCanary = (sessionId: string) => bucketOf(pluginId, sessionId) < 10;
    const started = await startTraffic(server.url, key, { tool: 'calc__add', pauseMs: 40, others: 3, canaries: 2, isCanary });
    return Object.assign(started, { canaries: new Set(started.sessions.filter((session) => isCanary(session.sessionId)).map((session) => session.sessionId)) });
  }

  const kindsOf = (view: RolloutView) => view.history.filter((event) => event.rolloutId === view.rollout?.id).map((event) => event.kind).reverse();

  it('a healthy canary paused past two windows keeps its step and its traffic share', async () => {
    const load = await traffic();
    try {
      await app.rollouts.upgrade('calc', { ref: 'v2.0.0' });
      const paused = await app.rollouts.pause('calc');
      assert.equal(paused.rollout?.status, 'paused');
      const pausedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 2 * WINDOW_MS + 1000));
      const view = await app.rollouts.status('calc');
      assert.equal(view.rollout?.status, 'paused');
      assert.equal(view.rollout?.step, 0, 'no step while paused');
      assert.equal(view.trafficPercent, 10, 'the traffic share is held');
      assert.deepEqual(kindsOf(view), ['started', 'paused']);
      // Held, not drained: while paused the canary sessions are served by v2, the others by v1.
      const during = load.callsBetween(pausedAt + 200, Date.now());
      assert.ok(during.some((call) => call.version === '2.0.0'), 'the canary served calls while paused');
      for (const call of during) assert.equal(call.version, load.canaries.has(call.sessionId) ? '2.0.0' : '1.0.0', JSON.stringify(call));
      assert.ok(view.health !== null && view.health.canary.calls > 0, 'the paused step is still measured');
    } finally {
      await load.stop();
    }
    await app.rollouts.rollback('calc', 'test: make room for the next upgrade');
  });

  it('a canary that degrades while paused is rolled back by the monitor', async () => {
    const load = await traffic();
    try {
      const started = await app.rollouts.upgrade('calc', { ref: 'v3.0.0' });
      assert.equal((await app.rollouts.pause('calc')).rollout?.status, 'paused');
      const view = await waitFor(
        'automatic rollback while paused',
        async () => {
          const current = await app.rollouts.status('calc');
          return current.rollout?.id === started.rollout.id && current.rollout.status === 'rolled_back' && kindsOf(current).includes('rolled_back') ? current : undefined;
        },
        20_000,
      );
      // The failed v2 left the slot v3 took: its folder is recorded as released first (issue #29).
      assert.deepEqual(kindsOf(view), ['folder', 'started', 'paused', 'rolled_back'], 'judged after the pause, never stepped');
      assert.match(view.rollout?.reason ?? '', /error rate/);
      assert.equal(view.rollout?.step, 0);
      const rolledBack = view.history.find((event) => event.rolloutId === started.rollout.id && event.kind === 'rolled_back')!;
      assert.equal(rolledBack.details['how'], 'automatic');
      assert.equal(view.slots.find((slot) => slot.status === 'failed')?.version.startsWith('3.0.0'), true);
      assert.equal(view.slots.find((slot) => slot.status === 'active')?.trafficPercent, 100);
    } finally {
      await load.stop();
    }
  });
});
