/**
 * The rollout monitor with no open rollout (issue #28): it neither judges nor reloads on every
 * tick (that was two reads of plugin_rollouts a second on every idle server); the table is read
 * again every tenth tick as the safety net. Timers are mocked, so the ticks are exact.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it, mock } from 'node:test';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createRolloutService } from '../../src/rollouts/index.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';

/** Polls with real time (only setInterval is mocked) until `done`, at most 10 s. */
async function waitFor(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
}

describeEachBackend('the rollout monitor while no rollout is open', (backend) => {
  let home: string;
  let app: App;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-rollout-idle-'));
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db: await backend.open() });
  });
  after(async () => {
    mock.timers.reset();
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('reads plugin_rollouts once at start and then once per tenth tick', async () => {
    let reads = 0;
    // Counts every statement that touches the rollouts table, whatever part of the service sends it.
    const db = new Proxy(app.db, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return (sql: string, params?: unknown[]) => {
          if (sql.includes('plugin_rollouts')) reads++;
          return (value as Database['query']).call(target, sql, params);
        };
      },
    });
    mock.timers.enable({ apis: ['setInterval'] });
    const rollouts = createRolloutService({ db, plugins: app.plugins, supervisor: app.supervisor, settings: { tickMs: 50 } });
    try {
      await rollouts.start();
      assert.equal(reads, 1, 'the routing table is read at start');
      for (let tick = 1; tick <= 25; tick++) {
        const before = reads;
        mock.timers.tick(50);
        // A pass that started (tick, then reload) finishes before the next tick; the interval
        // callback decides synchronously, so a tick that starts none has read nothing by now.
        for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
        if (tick % 10 === 0) await waitFor(() => reads >= before + 2);
      }
      // Ticks 10 and 20 each judge (one read) and reload (one read); the other 23 read nothing.
      assert.equal(reads, 1 + 2 * 2);
    } finally {
      await rollouts.close();
      mock.timers.reset();
    }
  });
});
