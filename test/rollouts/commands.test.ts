/**
 * The rollout commands and API (issue #11) on a real plugin from a real git repository:
 * `POST /api/v1/plugins/:id/upgrade`, `GET …/rollout`, pause, resume, rollback, promote (with
 * their refusals: bad bodies, missing scope, no rollout to move), and the CLI's
 * `quiver plugin upgrade` and `quiver plugin rollout status|promote|rollback` in process.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess } from '../helpers/cli.ts';
import { createApi } from '../../src/api/app.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { RolloutView } from '../../src/rollouts/index.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createTaggedRepo } from './helpers.ts';

const VERSIONS = [
  { tag: 'v1.0.0', version: '1.0.0', tools: ['add', 'echo'] },
  { tag: 'v2.0.0', version: '2.0.0', tools: ['add', 'echo', 'product'] },
];

describeEachBackend('rollout API (issue #11)', (backend) => {
  let home: string;
  let app: App;
  let api: ReturnType<typeof createApi>;
  let admin: string;
  let reader: string;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-rollout-api-'));
    await chmod(home, 0o755);
    const remote = await createTaggedRepo(join(home, 'repo'), VERSIONS);
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db: await backend.open() });
    await app.plugins.add(remote, { name: 'calc', ref: 'v1.0.0' });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.create({ name: 'admin', scopes: ['admin'] })).key;
    reader = (await app.apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
  });
  after(async () => {
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown, key = admin) => {
    const response = await api.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as RolloutView & { error?: { code: string; message: string } } };
  };

  it('refuses bad bodies, keys without admin, and moves of a rollout that does not exist', async () => {
    assert.equal((await call('POST', '/api/v1/plugins/calc/upgrade', { ref: 'v2.0.0', version: '2' })).status, 400);
    assert.equal((await call('POST', '/api/v1/plugins/calc/upgrade', { ref: 'v2.0.0', extra: true })).status, 400);
    assert.equal((await call('POST', '/api/v1/plugins/calc/upgrade', { ref: 'v2.0.0' }, reader)).status, 403);
    assert.equal((await call('GET', '/api/v1/plugins/nope/rollout')).status, 404);
    const promote = await call('POST', '/api/v1/plugins/calc/rollout/promote');
    assert.equal(promote.status, 409);
    assert.match(promote.body.error!.message, /no rollout in progress/);
    const empty = await call('GET', '/api/v1/plugins/calc/rollout');
    assert.equal(empty.status, 200);
    assert.equal(empty.body.rollout, null);
  });

  it('upgrade, pause, resume, rollback, then upgrade again and promote', async () => {
    const started = await call('POST', '/api/v1/plugins/calc/upgrade', { ref: 'v2.0.0' });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.rollout?.status, 'running');
    assert.equal(started.body.trafficPercent, 10);
    assert.deepEqual(started.body.slots.map((slot) => [slot.slot, slot.status, slot.trafficPercent]), [['blue', 'active', 90], ['green', 'canary', 10]]);
    assert.equal((await call('POST', '/api/v1/plugins/calc/upgrade', { ref: 'v2.0.0' })).status, 409, 'one rollout at a time');

    assert.equal((await call('POST', '/api/v1/plugins/calc/rollout/pause')).body.rollout?.status, 'paused');
    assert.equal((await call('POST', '/api/v1/plugins/calc/rollout/pause')).status, 409);
    assert.equal((await call('POST', '/api/v1/plugins/calc/rollout/resume')).body.rollout?.status, 'running');
    const rolledBack = await call('POST', '/api/v1/plugins/calc/rollout/rollback', { reason: 'checking the API' });
    assert.equal(rolledBack.body.rollout?.status, 'rolled_back');
    assert.equal(rolledBack.body.rollout?.reason, 'checking the API');
    assert.deepEqual(rolledBack.body.slots.map((slot) => [slot.slot, slot.status, slot.trafficPercent]), [['blue', 'active', 100], ['green', 'failed', 0]]);
    assert.deepEqual((await app.plugins.tools('calc')).map((tool) => tool.name).sort(), ['add', 'echo'], 'the catalog never moved');
    // The rolled-back version's process (started before it took traffic) stops.
    const versions = () => app.supervisor.processes().filter((process) => process.pluginId === started.body.pluginId).map((process) => process.version);
    assert.ok(!versions().some((version) => version.endsWith('+green')), `canary processes left: ${versions().join(', ')}`);

    // The same version rolled back a second time: the plugin is queued for re-verification (seed 000 §5.2).
    assert.equal((await call('POST', '/api/v1/plugins/calc/upgrade', { ref: 'v2.0.0' })).status, 202);
    const again = await call('POST', '/api/v1/plugins/calc/rollout/rollback', { reason: 'still bad' });
    assert.equal(again.body.history[0]?.kind, 'reverification');
    assert.match(again.body.history[0]!.message, /rolled back 2 times/);
    const { rows } = await app.db.query<{ payload: { reason: string } }>(`SELECT payload FROM jobs WHERE kind = 'verification.run'`);
    assert.ok(rows.some((row) => /rolled back 2 times/.test(row.payload.reason)), JSON.stringify(rows));

    assert.equal((await call('POST', '/api/v1/plugins/calc/upgrade', { ref: 'v2.0.0' })).status, 202);
    const promoted = await call('POST', '/api/v1/plugins/calc/rollout/promote');
    assert.equal(promoted.body.rollout?.status, 'promoted');
    assert.deepEqual(promoted.body.slots.map((slot) => [slot.slot, slot.status, slot.trafficPercent]), [['blue', 'idle', 0], ['green', 'active', 100]]);
    assert.deepEqual((await app.plugins.tools('calc')).map((tool) => tool.name).sort(), ['add', 'echo', 'product'], 'the catalog moved on promotion');
    assert.ok(!versions().some((version) => version.startsWith('1.0.0') || version.endsWith('+green')), `old processes left after promotion: ${versions().join(', ')}`);
    assert.deepEqual(promoted.body.history.map((event) => event.kind), ['promoted', 'started', 'reverification', 'rolled_back', 'started', 'rolled_back', 'resumed', 'paused', 'started']);
    const listed = (await call('GET', '/api/v1/rollouts')).body as unknown as { rollouts: RolloutView[] };
    assert.deepEqual(listed.rollouts.map((view) => view.plugin), ['calc']);
  });
});

describe('rollout CLI (issue #11)', () => {
  let home: string;
  let env: Record<string, string>;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-rollout-cli-'));
    await chmod(home, 0o755);
    const remote = await createTaggedRepo(join(home, 'repo'), VERSIONS);
    env = { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data'), QUIVER_VERIFY_ON_INSTALL: 'off' };
    const added = await runInProcess(['plugin', 'add', remote, '--name', 'calc', '--ref', 'v1.0.0'], env);
    assert.equal(added.code, 0, added.stderr);
  });
  after(() => rm(home, { recursive: true, force: true }));

  it('quiver plugin upgrade, rollout status, promote; rollback without a rollout fails with a hint', async () => {
    const upgraded = await runInProcess(['plugin', 'upgrade', 'calc', '--ref', 'v2.0.0'], env);
    assert.equal(upgraded.code, 0, upgraded.stderr);
    assert.match(upgraded.stdout, /rollout running, step 1\/3 \(10 %\), canary traffic 10 %/);
    assert.match(upgraded.stdout, /green\s+2\.0\.0\S*\s+canary\s+10 %/);
    const status = await runInProcess(['plugin', 'rollout', 'status', 'calc', '--json'], env);
    assert.equal(status.code, 0, status.stderr);
    assert.equal((JSON.parse(status.stdout) as RolloutView).rollout?.status, 'running');
    const promoted = await runInProcess(['plugin', 'rollout', 'promote', 'calc'], env);
    assert.equal(promoted.code, 0, promoted.stderr);
    assert.match(promoted.stdout, /rollout promoted/);
    const rollback = await runInProcess(['plugin', 'rollout', 'rollback', 'calc'], env);
    assert.notEqual(rollback.code, 0);
    assert.match(rollback.stderr, /was promoted; go back with 'quiver plugin upgrade calc --ref <previous ref>'/);
  });
});
