/**
 * Issue #12, native names over the API: `PUT /api/v1/workspaces/:w/native-names` turns them
 * on or off (admin keys only) and answers, like `GET …/names`, which tool names the
 * workspace's MCP sessions see natively and which keep the `plugin__` prefix, and why. Real
 * installs of real folder plugins (the same calc plugin twice, so `add` and `echo` collide,
 * beside a plugin whose names are its own), on both databases.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import type { Hono } from 'hono';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { createApi } from '../../src/api/app.ts';
import type { ApiEnv } from '../../src/api/http.ts';
import { pluginRoutes } from '../../src/api/routes/plugins.ts';
import { createApiKeyService } from '../../src/access/api-keys.ts';
import { createHarness, createPluginFolder, openTempDir, type PluginsHarness } from '../plugins/helpers.ts';

describeEachBackend('native names API', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let api: Hono<ApiEnv>;
  let admin: string;
  let reader: string;
  let root: string;

  async function call(method: string, path: string, options: { key?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? admin}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await api.request(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  }

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db);
    const apiKeys = createApiKeyService({ db });
    api = createApi({ apiKeys, modules: [pluginRoutes({ plugins: harness.plugins })] });
    admin = (await apiKeys.create({ name: 'admin', scopes: ['admin'] })).key;
    reader = (await apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
    root = await openTempDir('native-names');
    for (const [fixture, name] of [['calc', 'calc'], ['calc', 'calc-two'], ['bare', 'bare']] as const) {
      const created = await call('POST', '/api/v1/plugins', { body: { source: await createPluginFolder(root, fixture, name), name } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
    }
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('reports the names, switches native names on for admins only, and off again', async () => {
    const off = await call('GET', '/api/v1/workspaces/default/names', { key: reader });
    assert.equal(off.status, 200);
    assert.equal(off.body.nativeNames, false);
    assert.equal((await call('PUT', '/api/v1/workspaces/default/native-names', { key: reader, body: { nativeNames: true } })).status, 403);
    assert.equal((await call('PUT', '/api/v1/workspaces/default/native-names', { body: { nativeNames: 'yes' } })).status, 400);
    assert.equal((await call('PUT', '/api/v1/workspaces/nowhere/native-names', { body: { nativeNames: true } })).status, 404);

    const on = await call('PUT', '/api/v1/workspaces/default/native-names', { body: { nativeNames: true } });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    assert.equal(on.body.nativeNames, true);
    const bareTools = (await call('GET', '/api/v1/plugins/bare/tools', { key: reader })).body.tools.map((t: { name: string }) => t.name).sort();
    assert.ok(bareTools.length > 0);
    assert.deepEqual(on.body.native.map((n: { name: string }) => n.name), bareTools, "every bare tool keeps its own name");
    assert.deepEqual(
      on.body.keptPrefixed.map((k: { prefixed: string; reason: string }) => [k.prefixed, k.reason]),
      [
        ['calc-two__add', "'add' is served by 2 plugins: calc, calc-two"],
        ['calc-two__echo', "'echo' is served by 2 plugins: calc, calc-two"],
        ['calc__add', "'add' is served by 2 plugins: calc, calc-two"],
        ['calc__echo', "'echo' is served by 2 plugins: calc, calc-two"],
      ],
    );
    assert.deepEqual((await call('GET', '/api/v1/workspaces/default/names', { key: reader })).body, on.body);
    assert.equal((await call('PUT', '/api/v1/workspaces/default/native-names', { body: { nativeNames: false } })).body.nativeNames, false);
  });
});
