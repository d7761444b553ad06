/**
 * The plugin HTTP API through `app.request()` (no server): install, show, enable/disable,
 * secrets that never come back, failed installs as 422 with their step, scopes, workspaces,
 * the marketplace, and the Plugin Intelligence Document endpoints of seed 000 §6.3.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { Hono } from 'hono';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { createApi } from '../../src/api/app.ts';
import type { ApiEnv } from '../../src/api/http.ts';
import { pluginRoutes } from '../../src/api/routes/plugins.ts';
import { createApiKeyService } from '../../src/access/api-keys.ts';
import { createHarness, createPluginFolder, openTempDir, type PluginsHarness } from './helpers.ts';

const SECRET = `api-secret-${randomBytes(8).toString('hex')}`;

describeEachBackend('plugin API', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let api: Hono<ApiEnv>;
  let admin: string;
  let reader: string;
  let root: string;
  const seen: string[] = [];

  async function call(method: string, path: string, options: { key?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? admin}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await api.request(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
    const text = await response.text();
    seen.push(text);
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  }

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db);
    const apiKeys = createApiKeyService({ db });
    api = createApi({ apiKeys, modules: [pluginRoutes({ plugins: harness.plugins })] });
    admin = (await apiKeys.create({ name: 'admin', scopes: ['admin'] })).key;
    reader = (await apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
    root = await openTempDir('api');
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('installs with an admin key only, and reports a failed install as 422 with its step', async () => {
    const folder = await createPluginFolder(root, 'calc', 'calc');
    assert.equal((await call('POST', '/api/v1/plugins', { key: reader, body: { source: folder } })).status, 403);
    const created = await call('POST', '/api/v1/plugins', { body: { source: folder, name: 'calc', secrets: { FIXTURE_TOKEN: SECRET } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.tools.inserted.sort(), ['add', 'echo']);

    const crash = await createPluginFolder(root, 'crash', 'crash');
    const failed = await call('POST', '/api/v1/plugins', { body: { source: crash } });
    assert.equal(failed.status, 422);
    assert.equal(failed.body.error.code, 'install_failed');
    assert.equal(failed.body.error.details.step, 'discovery');
    const conflict = await call('POST', '/api/v1/plugins', { body: { source: folder, name: 'calc' } });
    assert.equal(conflict.status, 409);
    assert.equal((await call('POST', '/api/v1/plugins', { body: { source: folder, unknown: 1 } })).status, 400);
  });

  it('lists, shows and lists tools with a read key; secrets are write-only', async () => {
    const listed = await call('GET', '/api/v1/plugins', { key: reader });
    assert.deepEqual(listed.body.plugins.map((p: { name: string }) => p.name), ['calc']);
    const shown = await call('GET', '/api/v1/plugins/calc', { key: reader });
    assert.equal(shown.body.toolCount, 2);
    assert.deepEqual(shown.body.secrets.map((s: { key: string }) => s.key), ['FIXTURE_TOKEN']);
    const byId = await call('GET', `/api/v1/plugins/${shown.body.plugin.id}/tools`, { key: reader });
    assert.deepEqual(byId.body.tools.map((t: { qualifiedName: string }) => t.qualifiedName).sort(), ['calc__add', 'calc__echo']);
    assert.equal((await call('PUT', '/api/v1/plugins/calc/secrets/FIXTURE_TOKEN', { key: reader, body: { value: SECRET } })).status, 403);
    const put = await call('PUT', '/api/v1/plugins/calc/secrets/FIXTURE_TOKEN', { body: { value: SECRET } });
    assert.deepEqual(put.body, { key: 'FIXTURE_TOKEN', declared: true });
    assert.equal((await call('DELETE', '/api/v1/plugins/calc/secrets/NOPE')).status, 404);
    assert.equal((await call('GET', '/api/v1/plugins/nope', { key: reader })).status, 404);
  });

  it('manages workspaces, projects and enablement', async () => {
    assert.equal((await call('POST', '/api/v1/workspaces', { body: { name: 'team' } })).status, 201);
    assert.equal((await call('POST', '/api/v1/workspaces/team/projects', { body: { name: 'site' } })).status, 201);
    assert.deepEqual((await call('GET', '/api/v1/workspaces/team/projects', { key: reader })).body.projects.map((p: { name: string }) => p.name), ['site']);
    const enabled = await call('POST', '/api/v1/plugins/calc/enable', { body: { workspace: 'team', project: 'site' } });
    assert.deepEqual(enabled.body.enablements, [
      { workspace: 'default', project: null, enabled: true },
      { workspace: 'team', project: 'site', enabled: true },
    ]);
    assert.equal((await call('GET', '/api/v1/workspaces/team/tools?project=site', { key: reader })).body.tools.length, 2);
    assert.equal((await call('GET', '/api/v1/workspaces/team/tools', { key: reader })).body.tools.length, 0);
    await call('POST', '/api/v1/plugins/calc/disable');
    assert.equal((await call('GET', '/api/v1/workspaces/default/tools', { key: reader })).body.tools.length, 0);
    await call('POST', '/api/v1/plugins/calc/enable');
    const patched = await call('PATCH', '/api/v1/plugins/calc', { body: { status: 'disabled' } });
    assert.equal(patched.body.plugin.status, 'disabled');
    assert.equal((await call('GET', '/api/v1/workspaces/default/tools', { key: reader })).body.tools.length, 0);
    await call('PATCH', '/api/v1/plugins/calc', { body: { status: 'active' } });
    const synced = await call('POST', '/api/v1/plugins/calc/sync');
    assert.equal(synced.status, 200);
    assert.equal(synced.body.tools.unchanged, 2);
  });

  it('generates, validates, stores, exports and searches intelligence documents', async () => {
    assert.equal((await call('GET', '/api/v1/plugins/calc/intelligence', { key: reader })).status, 404);
    const generated = await call('POST', '/api/v1/plugins/calc/intelligence');
    assert.equal(generated.status, 201);
    assert.equal(generated.body.origin, 'generated');
    assert.match(generated.body.contentHash, /^[0-9a-f]{64}$/);
    assert.deepEqual(generated.body.pid.tools.map((t: { name: string }) => t.name), ['add', 'echo']);
    assert.ok(generated.body.pid.semantic.capabilities.includes('Add two numbers and return their sum.'));
    assert.ok(['valid', 'valid_with_warnings'].includes(generated.body.validationStatus));

    const document = {
      version: '1.0',
      pluginId: 'calc',
      semantic: { capabilities: ['Arithmetic on two numbers'], antiPatterns: ['Symbolic algebra'] },
      tools: [{ name: 'add', description: 'Adds', llmNotes: 'Prefer for sums of exactly two numbers.' }],
      execution: { typicalLatency: 'instant', timeoutRecommendation: 2_000 },
    };
    const put = await call('PUT', '/api/v1/plugins/calc/intelligence', { body: document });
    assert.equal(put.status, 200);
    assert.equal(put.body.origin, 'admin');
    assert.equal(put.body.validationStatus, 'valid');
    assert.notEqual(put.body.contentHash, generated.body.contentHash);
    const invalid = await call('PUT', '/api/v1/plugins/calc/intelligence', {
      body: { version: '1.0', pluginId: 'calc', tools: [{ name: 'add' }, { name: 'add' }], execution: { typicalLatency: 'glacial' } },
    });
    assert.equal(invalid.status, 400);
    assert.ok(invalid.body.error.details.errors.length >= 2, JSON.stringify(invalid.body));
    assert.equal((await call('GET', '/api/v1/plugins/calc/intelligence', { key: reader })).body.origin, 'admin');
    // Generating again refreshes what tools and manifest say and keeps the admin's execution profile.
    const regenerated = await call('POST', '/api/v1/plugins/calc/intelligence');
    assert.equal(regenerated.status, 201);
    assert.deepEqual(regenerated.body.pid.execution, document.execution);
    assert.deepEqual(regenerated.body.pid.tools.map((t: { name: string }) => t.name), ['add', 'echo']);
    await call('PUT', '/api/v1/plugins/calc/intelligence', { body: document });

    const exported = await call('GET', '/api/v1/plugins/intelligence/export', { key: reader });
    assert.deepEqual(exported.body.documents.map((d: { pluginName: string }) => d.pluginName), ['calc']);
    const found = await call('GET', '/api/v1/plugins/intelligence/search?q=sum%20of%20numbers', { key: reader });
    assert.equal(found.body.results[0].plugin, 'calc');
    assert.deepEqual((await call('GET', '/api/v1/plugins/intelligence/search?q=kubernetes', { key: reader })).body.results, []);
  });

  it('imports and searches the marketplace', async () => {
    const imported = await call('POST', '/api/v1/marketplace/import', {
      body: [
        { name: 'io.github.acme/tickets', description: 'Create and search support tickets in a helpdesk.', packages: [{ registryType: 'npm', identifier: '@acme/tickets-mcp', version: '1.0.0', transport: { type: 'stdio' } }] },
        { name: 'io.github.acme/pdf', description: 'Extract text and tables from PDF files.', packages: [{ registryType: 'pypi', identifier: 'acme-pdf' }] },
      ],
    });
    assert.deepEqual({ imported: imported.body.imported, inserted: imported.body.inserted }, { imported: 2, inserted: 2 });
    const hits = await call('GET', '/api/v1/marketplace?q=open%20a%20support%20ticket', { key: reader });
    assert.equal(hits.body.results[0].name, 'io.github.acme/tickets');
    assert.equal(hits.body.results[0].install, 'market:io.github.acme/tickets');
    const pdf = await call('GET', '/api/v1/marketplace?q=pdf%20tables', { key: reader });
    assert.equal(pdf.body.results[0].installable, false);
    assert.equal((await call('GET', '/api/v1/marketplace', { key: reader })).body.servers.length, 2);
  });

  it('removes a plugin, and no response ever carried a secret', async () => {
    assert.equal((await call('DELETE', '/api/v1/plugins/calc', { key: reader })).status, 403);
    assert.equal((await call('DELETE', '/api/v1/plugins/calc')).status, 204);
    assert.equal((await call('GET', '/api/v1/plugins/calc', { key: reader })).body.plugin.status, 'removed');
    assert.deepEqual((await call('GET', '/api/v1/plugins', { key: reader })).body.plugins, []);
    assert.ok(seen.length > 20);
    assert.ok(seen.every((text) => !text.includes(SECRET)), 'a response contained the secret');
  });
});
