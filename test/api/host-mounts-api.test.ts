/**
 * Host folders over HTTP (issue #26), on every backend: only an admin key lists, grants and
 * withdraws a plugin's host paths; a grant is recorded with the key; the hub's home (and a
 * folder holding it), a relative or missing path are 400s; the plugin's details show the grant.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createApi } from '../../src/api/app.ts';
import { requestJson } from '../helpers/api.ts';

describeEachBackend('host folders API', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let root: string;
  let home: string;
  let notes: string;
  let admin: string;
  let reader: string;

  const call = (method: string, path: string, key: string, body?: unknown) => requestJson<Record<string, any>>(api, method, path, key, body);

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-mounts-api-'));
    chmodSync(root, 0o755);
    home = join(root, 'home');
    notes = join(root, 'notes');
    mkdirSync(notes, { mode: 0o777 });
    chmodSync(notes, 0o777);
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_TRUST_EVALUATE_INTERVAL_MS: '0' }), { db });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    reader = (await app.apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
    await app.catalog.syncPlugin({ pluginId: 'notes', version: '1.0.0', tools: [{ name: 'search_notes', description: 'Search notes' }] });
  });
  after(async () => {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('grants, lists and withdraws with the admin scope, recorded with the key', async () => {
    assert.equal((await call('POST', '/api/v1/plugins/notes/mounts', reader, { path: notes })).status, 403);
    assert.equal((await call('GET', '/api/v1/plugins/notes/mounts', reader)).status, 403);
    const granted = await call('POST', '/api/v1/plugins/notes/mounts', admin, { path: notes, mode: 'rw', reason: 'their notes' });
    assert.equal(granted.status, 201, JSON.stringify(granted.body));
    assert.deepEqual([granted.body.mount.path, granted.body.mount.mode, granted.body.mount.reason], [notes, 'rw', 'their notes']);
    assert.match(granted.body.mount.actor, /^key:[^:]+:/);
    assert.equal((await call('POST', '/api/v1/plugins/notes/mounts', admin, { path: notes, mode: 'rw' })).status, 200, 'the same grant again changes nothing');
    const listed = await call('GET', '/api/v1/plugins/notes/mounts', admin);
    assert.deepEqual(listed.body.mounts.map((mount: { path: string; mode: string }) => [mount.path, mount.mode]), [[notes, 'rw']]);
    const details = await call('GET', '/api/v1/plugins/notes', admin);
    assert.deepEqual(details.body.mounts.map((mount: { path: string }) => mount.path), [notes]);
    assert.equal((await call('DELETE', '/api/v1/plugins/notes/mounts', reader, { path: notes })).status, 403);
    assert.equal((await call('DELETE', '/api/v1/plugins/notes/mounts', admin, { path: notes })).status, 204);
    assert.equal((await call('DELETE', '/api/v1/plugins/notes/mounts', admin, { path: notes })).status, 404);
  });

  it("refuses the hub's home, a folder holding it, a relative or missing path and a bad mode", async () => {
    for (const path of [home, dirname(home), join(home, 'plugins')]) {
      const refused = await call('POST', '/api/v1/plugins/notes/mounts', admin, { path, mode: 'ro' });
      assert.equal(refused.status, 400, path);
      assert.match(refused.body.error.message, /the hub's own/, path);
    }
    for (const body of [{ path: 'notes' }, { path: join(root, 'missing') }, { path: notes, mode: 'rwx' }, {}]) {
      assert.equal((await call('POST', '/api/v1/plugins/notes/mounts', admin, body)).status, 400, JSON.stringify(body));
    }
    assert.equal((await call('POST', '/api/v1/plugins/nope/mounts', admin, { path: notes })).status, 404);
    assert.deepEqual((await call('GET', '/api/v1/plugins/notes/mounts', admin)).body.mounts, []);
  });
});
