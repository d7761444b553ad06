/**
 * The credential and setting routes through `app.request()` over a real plugin service: both
 * kinds of keyed value are set and removed the same way (admin only, 204 on removal, a 404 that
 * names the kind and the key when it is not set, 400 naming the kind for a bad body), and a
 * secret's value never comes back.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import type { Hono } from 'hono';
import { describeEachBackend } from '../../../../test/helpers/backends.ts';
import { createHarness, createPluginFolder, openTempDir, type PluginsHarness } from '../../../../test/plugins/helpers.ts';
import type { Database } from '../../../store/database.ts';
import { createApiKeyService, type ApiKeyService } from '../../../access/api-keys.ts';
import { createApi } from '../../app.ts';
import type { ApiEnv } from '../../http.ts';
import { pluginRoutes } from '../plugins.ts';

describeEachBackend('plugin credential and setting routes', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let apiKeys: ApiKeyService;
  let api: Hono<ApiEnv>;
  let admin: string;
  let reader: string;
  let root: string;

  async function call(method: string, path: string, options: { key?: string; body?: unknown } = {}): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? admin}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await api.request(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
    return { status: response.status, text: await response.text() };
  }

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db);
    apiKeys = createApiKeyService({ db });
    api = createApi({ apiKeys, modules: [pluginRoutes({ plugins: harness.plugins })] });
    admin = (await apiKeys.create({ name: 'admin', scopes: ['admin'] })).key;
    reader = (await apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
    root = await openTempDir('settings-routes');
    await harness.plugins.add(await createPluginFolder(root, 'calc', 'calc'), { name: 'calc' });
  });
  after(async () => {
    await harness.close();
    await apiKeys.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  const kinds = [
    { segment: 'secrets', noun: 'secret', key: 'API_TOKEN', value: 'route-secret-4f1c9a' },
    { segment: 'env', noun: 'setting', key: 'REGION', value: 'eu-west' },
  ] as const;

  for (const kind of kinds) {
    it(`sets and removes a ${kind.noun} with an admin key only, and says when it is not set`, async () => {
      const path = `/api/v1/plugins/calc/${kind.segment}/${kind.key}`;
      assert.equal((await call('PUT', path, { key: reader, body: { value: kind.value } })).status, 403);
      const put = await call('PUT', path, { body: { value: kind.value } });
      assert.equal(put.status, 200, put.text);
      assert.equal(JSON.parse(put.text).key, kind.key);
      assert.equal(put.text.includes(kind.value), kind.segment === 'env', 'a secret value never comes back; a setting value does');

      assert.equal((await call('DELETE', path, { key: reader })).status, 403);
      const removed = await call('DELETE', path);
      assert.deepEqual([removed.status, removed.text], [204, '']);
      const again = await call('DELETE', path);
      assert.equal(again.status, 404);
      assert.deepEqual(JSON.parse(again.text), { error: { code: 'not_found', message: `${kind.noun} '${kind.key}' is not set` } });
    });

    it(`refuses a bad ${kind.noun} body, naming what it is`, async () => {
      const bad = await call('PUT', `/api/v1/plugins/calc/${kind.segment}/${kind.key}`, { body: { value: kind.value, extra: true } });
      assert.equal(bad.status, 400);
      const error = JSON.parse(bad.text).error;
      assert.equal(error.code, 'invalid_input');
      assert.match(error.message, new RegExp(`^invalid ${kind.noun}:`));
    });
  }

  it('answers 404 for a plugin that does not exist', async () => {
    assert.equal((await call('PUT', '/api/v1/plugins/nope/secrets/A', { body: { value: 'x' } })).status, 404);
    assert.equal((await call('DELETE', '/api/v1/plugins/nope/env/A')).status, 404);
  });
});
