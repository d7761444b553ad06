import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { Database } from '../../store/database.ts';
import { createApiKeyService } from '../../access/api-keys.ts';
import { createCatalogService } from '../../catalog/service.ts';
import { createApi } from '../app.ts';
import { catalogRoutes } from './catalog.ts';

const BASE = '/internal/tool-registry';

describeEachBackend('catalog routes', (backend) => {
  let db: Database;
  let api: ReturnType<typeof createApi>;
  let admin: string;
  let reader: string;
  let apiKeys: ReturnType<typeof createApiKeyService>;

  before(async () => {
    db = await backend.open();
    apiKeys = createApiKeyService({ db });
    admin = (await apiKeys.create({ name: 'ops', scopes: ['admin'] })).key;
    reader = (await apiKeys.create({ name: 'viewer', scopes: ['read'] })).key;
    api = createApi({ apiKeys, modules: [catalogRoutes({ catalog: createCatalogService({ db }) })] });
  });
  after(async () => {
    // The key service listens for revocations: close it before the database.
    await apiKeys.close();
    await db.close();
  });

  const call = async (method: string, path: string, key: string | undefined, body?: unknown) => {
    const response = await api.request(path, {
      method,
      headers: {
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? null : JSON.parse(text)) as Record<string, any> };
  };

  it('syncs a plugin and serves its tools, versions and page categories', async () => {
    const sync = await call('POST', `${BASE}/plugins/sync`, admin, {
      pluginId: 'crm',
      version: '1.0.0',
      categories: [{ name: 'deals' }],
      pageMappings: [{ pagePattern: 'deals*', category: 'deals', priority: 3 }],
      tools: [{ name: 'list_deals', description: 'List deals', category: 'deals' }, { name: 'health' }],
    });
    assert.equal(sync.status, 200);
    assert.deepEqual(sync.body.report.inserted, ['list_deals', 'health']);

    const list = await call('GET', `${BASE}/tools?pluginName=crm&limit=1&offset=0`, reader);
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 2);
    assert.equal(list.body.tools.length, 1);
    assert.equal(list.body.tools[0].qualifiedName, 'crm__health');

    const forPage = await call('GET', `${BASE}/categories/for-page/deals/pipeline`, reader);
    assert.equal(forPage.body.page, 'deals/pipeline');
    assert.deepEqual(forPage.body.categories.map((c: { categoryName: string }) => c.categoryName), ['deals']);
    const tree = await call('GET', `${BASE}/categories`, reader);
    assert.deepEqual(tree.body.categories.map((c: { name: string; children: unknown[] }) => [c.name, c.children.length]), [['deals', 0]]);
    assert.equal((await call('GET', `${BASE}/categories?flat=true`, reader)).body.categories[0].children, undefined);
  });

  it('creates, updates, rolls back and deletes a tool, attributing changes to the key', async () => {
    const created = await call('POST', `${BASE}/tools`, admin, { name: 'web_search', description: 'Search the web' });
    assert.equal(created.status, 201);
    const id = created.body.tool.id as string;
    const updated = await call('PUT', `${BASE}/tools/${id}`, admin, { description: 'Search the whole web', changeReason: 'clarify' });
    assert.equal(updated.body.tool.version, 2);
    assert.equal(updated.body.tool.embeddingStatus, 'stale');
    const versions = await call('GET', `${BASE}/tools/${id}/versions`, reader);
    assert.deepEqual(versions.body.versions.map((v: { version: number }) => v.version), [2, 1]);
    assert.equal(versions.body.versions[0].createdBy, 'key:ops');
    assert.deepEqual(versions.body.versions[0].changedFields, ['description']);
    const rolled = await call('POST', `${BASE}/tools/${id}/rollback`, admin, { version: 1 });
    assert.equal(rolled.body.tool.description, 'Search the web');
    assert.equal(rolled.body.tool.version, 3);
    const deleted = await call('DELETE', `${BASE}/tools/${id}`, admin);
    assert.equal(deleted.status, 200);
    assert.ok(deleted.body.tool.deletedAt);
    assert.equal((await call('DELETE', `${BASE}/tools/${id}`, admin)).status, 404);
  });

  it('manages categories, mappings and visibility rules', async () => {
    const category = await call('POST', `${BASE}/categories`, admin, { name: 'search' });
    assert.equal(category.status, 201);
    const categoryId = category.body.category.id as string;
    const mapping = await call('POST', `${BASE}/page-mappings`, admin, { pagePattern: '*search*', categoryId, priority: 1 });
    assert.equal(mapping.status, 201);
    const moved = await call('PUT', `${BASE}/page-mappings/${mapping.body.mapping.id}`, admin, { priority: 7 });
    assert.equal(moved.body.mapping.priority, 7);
    assert.equal((await call('GET', `${BASE}/page-mappings`, reader)).body.mappings.length, 2);

    const rule = await call('POST', `${BASE}/visibility-rules`, admin, {
      ruleType: 'tier', effect: 'allow', categoryId, conditions: { tier: { gte: 'teams' } },
    });
    assert.equal(rule.status, 201);
    const ruleId = rule.body.rule.id as string;
    assert.equal((await call('PUT', `${BASE}/visibility-rules/${ruleId}`, admin, { isActive: false })).body.rule.isActive, false);
    assert.equal((await call('GET', `${BASE}/visibility-rules`, reader)).body.rules.length, 0);
    assert.equal((await call('GET', `${BASE}/visibility-rules?includeInactive=true`, reader)).body.rules.length, 1);
    assert.equal((await call('DELETE', `${BASE}/visibility-rules/${ruleId}`, admin)).status, 204);

    const renamed = await call('PUT', `${BASE}/categories/${categoryId}`, admin, { displayName: 'Search' });
    assert.equal(renamed.body.category.displayName, 'Search');
    assert.equal((await call('DELETE', `${BASE}/page-mappings/${mapping.body.mapping.id}`, admin)).status, 204);
    assert.equal((await call('DELETE', `${BASE}/categories/${categoryId}`, admin)).status, 204);
    assert.equal((await call('DELETE', `${BASE}/categories/${categoryId}`, admin)).status, 404);
  });

  it('writes categories, page mappings and visibility rules the same way: admin only, bodies named in errors, 404 for an unknown id', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const resources = [
      { path: 'categories', noun: 'category' },
      { path: 'page-mappings', noun: 'page mapping' },
      { path: 'visibility-rules', noun: 'visibility rule' },
    ];
    for (const { path, noun } of resources) {
      assert.equal((await call('POST', `${BASE}/${path}`, reader, { bogus: 1 })).status, 403, path);
      assert.equal((await call('PUT', `${BASE}/${path}/${unknown}`, reader, { bogus: 1 })).status, 403, path);
      assert.equal((await call('DELETE', `${BASE}/${path}/${unknown}`, reader)).status, 403, path);
      const badCreate = await call('POST', `${BASE}/${path}`, admin, { bogus: 1 });
      assert.equal(badCreate.status, 400, path);
      assert.match(badCreate.body.error.message, new RegExp(`^invalid ${noun}: `), path);
      const badPatch = await call('PUT', `${BASE}/${path}/${unknown}`, admin, { bogus: 1 });
      assert.equal(badPatch.status, 400, path);
      assert.match(badPatch.body.error.message, new RegExp(`^invalid ${noun} patch: `), path);
      assert.equal((await call('DELETE', `${BASE}/${path}/${unknown}`, admin)).status, 404, path);
    }
  });

  it('maps errors to statuses with details, and enforces scopes', async () => {
    const bad = await call('POST', `${BASE}/visibility-rules`, admin, { ruleType: 'org', effect: 'allow', conditions: { tier: 'teams' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_input');
    assert.ok(bad.body.error.details.issues.length > 0);
    const badSync = await call('POST', `${BASE}/plugins/sync`, admin, { pluginId: 'crm', version: '2', tools: [{ name: 'a__b' }] });
    assert.equal(badSync.status, 400);
    assert.equal(badSync.body.error.details.issues[0].path, 'tools.0.name');
    assert.equal((await call('GET', `${BASE}/tools/00000000-0000-4000-8000-000000000000`, reader)).status, 404);
    assert.equal((await call('GET', `${BASE}/tools?limit=9999`, reader)).status, 400);
    assert.equal((await call('POST', `${BASE}/tools`, admin, { name: 'health', pluginName: 'crm' })).status, 409);
    assert.equal((await call('POST', `${BASE}/tools`, admin, '{not json')).status, 400);
    assert.equal((await call('POST', `${BASE}/tools`, reader, { name: 'x' })).status, 403);
    assert.equal((await call('POST', `${BASE}/plugins/sync`, reader, { pluginId: 'crm', version: '1', tools: [] })).status, 403);
    assert.equal((await call('GET', `${BASE}/tools`, undefined)).status, 401);
  });

  it('describes its routes in the OpenAPI document', async () => {
    const document = await call('GET', '/openapi.json', undefined);
    assert.ok(document.body.paths[`${BASE}/tools/{id}/rollback`].post);
    assert.ok(document.body.paths[`${BASE}/categories/for-page/{page}`].get);
    assert.ok(document.body.paths[`${BASE}/plugins/sync`].post.requestBody);
  });
});
