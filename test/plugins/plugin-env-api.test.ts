/**
 * The plugin settings endpoints (issue #15) through `app.request()`: admin only, values in plain,
 * the same refusals as the service (400 for loader variables, 409 for a key stored as a
 * secret), 404 for a setting that is not there, and the paths in the OpenAPI document.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import type { Hono } from 'hono';
import { createApiKeyService } from '../../src/access/api-keys.ts';
import { createApi } from '../../src/api/app.ts';
import type { ApiEnv } from '../../src/api/http.ts';
import { pluginRoutes } from '../../src/api/routes/plugins.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createHarness, createPluginFolder, openTempDir, type PluginsHarness } from './helpers.ts';

describeEachBackend('plugin settings API', (backend) => {
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
    root = await openTempDir('env-api');
    await harness.plugins.add(await createPluginFolder(root, 'calc', 'calc'), { name: 'calc' });
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('sets, lists and removes settings with an admin key only', async () => {
    assert.equal((await call('PUT', '/api/v1/plugins/calc/env/REGION', { key: reader, body: { value: 'eu' } })).status, 403);
    assert.equal((await call('GET', '/api/v1/plugins/calc/env', { key: reader })).status, 403);
    const put = await call('PUT', '/api/v1/plugins/calc/env/REGION', { body: { value: 'eu-west' } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual([put.body.key, put.body.value], ['REGION', 'eu-west']);
    const listed = await call('GET', '/api/v1/plugins/calc/env');
    assert.deepEqual(listed.body.env.map((row: { key: string; value: string }) => [row.key, row.value]), [['REGION', 'eu-west']]);
    const shown = await call('GET', '/api/v1/plugins/calc');
    assert.deepEqual(shown.body.env.map((row: { key: string }) => row.key), ['REGION']);
    assert.equal((await call('DELETE', '/api/v1/plugins/calc/env/REGION')).status, 204);
    const again = await call('DELETE', '/api/v1/plugins/calc/env/REGION');
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'not_found');
  });

  it('refuses what may not be a setting, and unknown plugins', async () => {
    const loader = await call('PUT', '/api/v1/plugins/calc/env/LD_PRELOAD', { body: { value: '/tmp/x.so' } });
    assert.equal(loader.status, 400);
    assert.equal(loader.body.error.code, 'invalid_input');
    assert.equal((await call('PUT', '/api/v1/plugins/calc/secrets/TOKEN', { body: { value: 'sekrit-value' } })).status, 200);
    const clash = await call('PUT', '/api/v1/plugins/calc/env/TOKEN', { body: { value: 'plain' } });
    assert.equal(clash.status, 409);
    assert.equal(clash.body.error.code, 'conflict');
    assert.equal((await call('PUT', '/api/v1/plugins/calc/env/A', { body: { value: 'x', extra: 1 } })).status, 400);
    assert.equal((await call('PUT', '/api/v1/plugins/nope/env/A', { body: { value: 'x' } })).status, 404);
  });

  it('documents the endpoints in OpenAPI', async () => {
    const document = (await (await api.request('/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.keys(document.paths);
    const env = paths.find((path) => /plugins\/(:id|\{id\})\/env$/.test(path));
    const key = paths.find((path) => /plugins\/(:id|\{id\})\/env\/(:key|\{key\})$/.test(path));
    assert.ok(env && key, paths.join(', '));
    assert.deepEqual(Object.keys(document.paths[key]!).sort(), ['delete', 'put']);
  });
});
