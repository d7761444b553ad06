/**
 * `POST /api/v1/plugins` with an `openapi:` source and `baseUrl` (issue #14), through
 * `app.request()`: installs the committed Petstore document, the tools come from it, the
 * secrets are write-only; `baseUrl` is refused for other sources and when it is not http(s),
 * and a document that cannot be read fails at its step (422).
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { createApi } from '../../src/api/app.ts';
import type { ApiEnv } from '../../src/api/http.ts';
import { pluginRoutes } from '../../src/api/routes/plugins.ts';
import { createApiKeyService } from '../../src/access/api-keys.ts';
import { createHarness, createPluginFolder, openTempDir, type PluginsHarness } from '../plugins/helpers.ts';

const fixture = fileURLToPath(new URL('../fixtures/openapi/petstore.yaml', import.meta.url));
const SECRET = `api-key-${randomBytes(8).toString('hex')}`;

describeEachBackend('OpenAPI plugins over the REST API', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let api: Hono<ApiEnv>;
  let admin: string;
  let root: string;

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; body: any }> {
    const headers: Record<string, string> = { authorization: `Bearer ${admin}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await api.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    return { status: response.status, text, body: text === '' ? undefined : JSON.parse(text) };
  }

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db);
    const apiKeys = createApiKeyService({ db });
    api = createApi({ apiKeys, modules: [pluginRoutes({ plugins: harness.plugins })] });
    admin = (await apiKeys.create({ name: 'admin', scopes: ['admin'] })).key;
    root = await openTempDir('openapi-api');
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('installs an openapi: source with baseUrl and write-only secrets', async () => {
    const created = await call('POST', '/api/v1/plugins', { source: `openapi:${fixture}`, baseUrl: 'https://petstore.example.com/v2', secrets: { OPENAPI_API_KEY: SECRET } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.tools.inserted.length, 20);
    const shown = await call('GET', '/api/v1/plugins/petstore');
    assert.equal(shown.body.plugin.sourceType, 'openapi');
    assert.equal(shown.body.plugin.source.baseUrl, 'https://petstore.example.com/v2');
    assert.deepEqual(shown.body.secrets.map((secret: { key: string }) => secret.key), ['OPENAPI_API_KEY']);
    assert.ok(!created.text.includes(SECRET) && !shown.text.includes(SECRET));
  });

  it('refuses baseUrl for other sources or when not http(s), and reports an unreadable document at its step', async () => {
    const folder = await createPluginFolder(root, 'calc', 'calc');
    const other = await call('POST', '/api/v1/plugins', { source: folder, baseUrl: 'https://api.example.com' });
    assert.equal(other.status, 400);
    assert.match(other.body.error.message, /--base-url only applies to openapi: sources/);
    assert.equal((await call('POST', '/api/v1/plugins', { source: `openapi:${fixture}`, name: 'ftp', baseUrl: 'ftp://api.example.com' })).status, 400);
    const missing = await call('POST', '/api/v1/plugins', { source: `openapi:${root}/none.yaml`, name: 'none', baseUrl: 'https://api.example.com' });
    assert.equal(missing.status, 422);
    assert.equal(missing.body.error.details.step, 'fetch-spec');
  });
});
