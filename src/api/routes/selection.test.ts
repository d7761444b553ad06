import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { Database } from '../../store/database.ts';
import { createApiKeyService } from '../../access/api-keys.ts';
import { createApi } from '../app.ts';
import { selectionRoutes } from './selection.ts';
import { createSelectionEngine, type SelectionEngine } from '../../selection/engine.ts';
import { createSeededRandom } from '../../selection/random.ts';
import { addRule, seedFixture, type Fixture } from '../../selection/test-fixtures.ts';
import { createTenantVisibility } from '../../composition/tenant-visibility.ts';

describeEachBackend('selection routes', (backend) => {
  let db: Database;
  let fixture: Fixture;
  let selection: SelectionEngine;
  let api: ReturnType<typeof createApi>;
  let apiKeys: ReturnType<typeof createApiKeyService>;
  const keys: Record<string, string> = {};

  before(async () => {
    db = await backend.open();
    fixture = await seedFixture(db);
    // Org acme cannot see the CRM; org globex cannot see GitHub.
    await addRule(db, { ruleType: 'org', effect: 'deny', conditions: { orgIds: ['acme'] }, pluginId: fixture.plugins.crm });
    await addRule(db, { ruleType: 'org', effect: 'deny', conditions: { orgIds: ['globex'] }, pluginId: fixture.plugins.github });
    apiKeys = createApiKeyService({ db });
    // Both subscribe to notifications; subscribing one after the other keeps PostgreSQL's single
    // LISTEN connection from being opened twice (store/postgres-database races on it).
    await apiKeys.ready();
    selection = createSelectionEngine({ db, random: createSeededRandom(4), events: { flushMs: 5 } });
    api = createApi({ apiKeys, modules: [selectionRoutes({ selection, tenancy: createTenantVisibility(selection, { db }) })] });
    const make = async (name: string, input: Parameters<typeof apiKeys.create>[0]) => {
      keys[name] = (await apiKeys.create(input)).key;
    };
    await make('admin', { name: 'admin', scopes: ['admin'] });
    await make('acme', { name: 'acme', scopes: ['select'], orgId: 'acme' });
    await make('globex', { name: 'globex', scopes: ['select'], orgId: 'globex', tier: 'teams' });
    await make('open', { name: 'open', scopes: ['select'] });
    await make('teamB', { name: 'team-b', scopes: ['select'], workspaceId: fixture.otherWorkspaceId });
    await make('readA', { name: 'read a', scopes: ['read'], orgId: 'acme' });
    await make('mcp', { name: 'mcp only', scopes: ['mcp'] });
  });
  after(async () => {
    await selection.close();
    await apiKeys.close();
    await db.close();
  });

  const post = (path: string, key: string | undefined, body: unknown, contentType = 'application/json') =>
    api.request(path, {
      method: 'POST',
      headers: { 'content-type': contentType, ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const get = (path: string, key: string | undefined) => api.request(path, { headers: { authorization: `Bearer ${key}` } });
  type Selection = { tools: Array<{ qualifiedName: string; reason: string }>; metadata: { eventId?: string; contextKey: string; warnings: string[] } };
  const names = (body: Selection) => body.tools.map((t) => t.qualifiedName);

  describe('POST /v1/select', () => {
    it('selects within the key’s organisation; two organisations never see each other’s tools', async () => {
      for (const query of ['github issue', 'crm contacts', 'deals forecast', 'quarterly revenue report']) {
        const acme = (await (await post('/v1/select', keys.acme, { query, k: 20 })).json()) as Selection;
        const globex = (await (await post('/v1/select', keys.globex, { query, k: 20 })).json()) as Selection;
        assert.ok(!names(acme).some((n) => n.startsWith('crm__') || n === 'globex_report'), names(acme).join(','));
        assert.ok(!names(globex).some((n) => n.startsWith('github__') || n === 'acme_report'), names(globex).join(','));
      }
      const own = (await (await post('/v1/select', keys.acme, { query: 'quarterly revenue report', k: 5 })).json()) as Selection;
      assert.ok(names(own).includes('acme_report'));
    });

    it('refuses another organisation or tier (403 naming the field) and runs with the bound tier', async () => {
      const response = await post('/v1/select', keys.acme, { query: 'github issue', context: { orgId: 'globex' } });
      assert.equal(response.status, 403);
      const error = ((await response.json()) as { error: { code: string; details: { field: string } } }).error;
      assert.equal(error.code, 'forbidden');
      assert.equal(error.details.field, 'context.orgId');
      const same = await post('/v1/select', keys.acme, { query: 'github issue', context: { orgId: 'acme' } });
      assert.equal(same.status, 200);
      const otherTier = await post('/v1/select', keys.globex, { query: 'x', context: { tier: 'government', page: 'deals' } });
      assert.equal(otherTier.status, 403);
      assert.equal(((await otherTier.json()) as { error: { details: { field: string } } }).error.details.field, 'context.tier');
      const globex = (await (await post('/v1/select', keys.globex, { query: 'x', context: { page: 'deals' } })).json()) as Selection;
      assert.equal(globex.metadata.contextKey, 'teams:deals:general:org=globex', 'the key’s tier and organisation apply');
    });

    it('lets an unbound operator key and an admin key select for any context', async () => {
      const asGlobex = (await (await post('/v1/select', keys.open, { query: 'crm contacts', k: 20, context: { orgId: 'globex' } })).json()) as Selection;
      assert.ok(!names(asGlobex).some((n) => n.startsWith('github__')), 'the body’s organisation applies');
      const admin = await post('/v1/select', keys.admin, { query: 'x', context: { orgId: 'acme', tier: 'government', workspace: 'default' } });
      assert.equal(admin.status, 200);
    });

    it('keeps a workspace-bound key in its workspace', async () => {
      const inside = (await (await post('/v1/select', keys.teamB, { query: 'github issue', k: 10 })).json()) as Selection;
      assert.deepEqual(names(inside).sort(), ['health', 'search_tools']);
      assert.equal((await post('/v1/select', keys.teamB, { query: 'github issue', context: { workspace: 'default' } })).status, 403);
      assert.equal((await post('/v1/select', keys.teamB, { query: 'github issue', context: { workspace: fixture.otherWorkspaceId } })).status, 200);
      assert.equal((await post('/v1/select', keys.open, { query: 'x', context: { workspace: 'missing' } })).status, 404);
    });

    it('authenticates, checks scope and validates the body', async () => {
      assert.equal((await post('/v1/select', undefined, { query: 'x' })).status, 401);
      assert.equal((await post('/v1/select', 'qvr_wrong', { query: 'x' })).status, 401);
      assert.equal((await post('/v1/select', keys.mcp, { query: 'x' })).status, 403);
      assert.equal((await post('/v1/select', keys.open, { query: '' })).status, 400);
      assert.equal((await post('/v1/select', keys.open, { query: 'x', log: false })).status, 400, 'logging is not the caller’s choice here');
      assert.equal((await post('/v1/select', keys.open, { query: 'x', k: 500 })).status, 400);
      assert.equal((await post('/v1/select', keys.open, '{nope')).status, 400);
      assert.equal((await post('/v1/select', keys.open, 'query=x', 'text/plain')).status, 400);
    });
  });

  describe('POST /v1/outcomes', () => {
    it('records an outcome for the key’s own events only, once', async () => {
      const globexSelection = (await (await post('/v1/select', keys.globex, { query: 'crm contacts', k: 3 })).json()) as Selection;
      const eventId = globexSelection.metadata.eventId!;
      const called = globexSelection.tools.find((t) => t.reason !== 'pinned')!.qualifiedName;
      assert.equal((await post('/v1/outcomes', keys.acme, { eventId, toolsCalled: [called], success: true })).status, 404);
      const ok = await post('/v1/outcomes', keys.globex, { eventId, toolsCalled: [called], success: true });
      assert.equal(ok.status, 200);
      assert.deepEqual(((await ok.json()) as { outcome: string }).outcome, 'success');
      assert.equal((await post('/v1/outcomes', keys.globex, { eventId, toolsCalled: [], success: true })).status, 409);
      assert.equal((await post('/v1/outcomes', keys.globex, { eventId: 'nope', toolsCalled: [], success: true })).status, 400);
      assert.equal((await post('/v1/outcomes', keys.readA, { eventId, toolsCalled: [], success: true })).status, 403);
    });
  });

  describe('admin and analytics', () => {
    it('runs a test selection without logging, for admins only', async () => {
      const response = await post('/internal/tool-registry/test-selection', keys.admin, { query: 'github issue', k: 2 });
      assert.equal(response.status, 200);
      const body = (await response.json()) as Selection;
      assert.equal(body.metadata.eventId, undefined);
      assert.ok(body.tools.length > 0);
      assert.equal((await post('/internal/tool-registry/test-selection', keys.open, { query: 'x' })).status, 403);
    });

    it('serves analytics per organisation for read keys and across organisations for admins', async () => {
      await post('/v1/select', keys.acme, { query: 'github issue', k: 2 });
      await selection.flush();
      const readMetrics = (await (await get('/internal/tool-registry/analytics/metrics', keys.readA)).json()) as { total: number };
      const adminMetrics = (await (await get('/internal/tool-registry/analytics/metrics', keys.admin)).json()) as { total: number };
      const adminAcme = (await (await get('/internal/tool-registry/analytics/metrics?orgId=acme', keys.admin)).json()) as { total: number };
      assert.ok(readMetrics.total >= 1);
      assert.equal(readMetrics.total, adminAcme.total);
      assert.ok(adminMetrics.total > readMetrics.total);
      const heatmap = (await (await get('/internal/tool-registry/analytics/heatmap?days=30&limit=5', keys.readA)).json()) as { cells: Array<{ qualifiedName: string }> };
      assert.ok(heatmap.cells.length > 0 && heatmap.cells.length <= 5);
      assert.ok(!heatmap.cells.some((cell) => cell.qualifiedName.startsWith('crm__')), 'acme never had CRM tools offered');
      assert.equal((await get('/internal/tool-registry/analytics/accuracy', keys.readA)).status, 200);
      assert.equal((await get('/internal/tool-registry/analytics/drift?maxAgeDays=1', keys.readA)).status, 200);
      assert.equal((await get('/internal/tool-registry/analytics/metrics?orgId=globex', keys.readA)).status, 403);
      assert.equal((await get('/internal/tool-registry/analytics/metrics', keys.acme)).status, 403, 'select scope is not read');
      assert.equal((await get('/internal/tool-registry/analytics/metrics?days=0', keys.admin)).status, 400);
    });

    it('describes every route in the OpenAPI document', async () => {
      const document = (await (await api.request('/openapi.json')).json()) as { paths: Record<string, unknown> };
      for (const path of ['/v1/select', '/v1/outcomes', '/internal/tool-registry/test-selection', '/internal/tool-registry/analytics/drift']) {
        assert.ok(path in document.paths, path);
      }
    });
  });
});
