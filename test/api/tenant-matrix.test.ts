/**
 * The tenant matrix (issue #18): one hub with tools of two organisations, a role-gated tool, a
 * plugin denied to one organisation and two workspaces with different enablement; then every
 * endpoint that returns tools, events, analytics or metadata is read with keys of org-a, org-b,
 * a ws2-bound key (no organisation) and an org-a key holding the `finance` role, and each sees
 * exactly its own. The widening request bodies of finding 1 are refused with 403 naming the field.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createApi } from '../../src/api/app.ts';
import { requestJson } from '../helpers/api.ts';

type Json = Record<string, unknown>;
type Tenant = 'a' | 'b' | 'w' | 'f';

/** What each tenant may see: qualified tool names, plugins, categories (all derived from the setup below). */
const EXPECTED: Record<Tenant, { tools: string[]; plugins: string[]; categories: string[]; workspace: string }> = {
  a: { tools: ['shared__a_private_report', 'shared__lookup_weather'], plugins: ['shared'], categories: ['reports', 'weather'], workspace: 'default' },
  b: {
    tools: ['finance__wire_money', 'shared__b_private_report', 'shared__lookup_weather'],
    plugins: ['finance', 'shared'],
    categories: ['payments', 'reports', 'weather'],
    workspace: 'default',
  },
  w: { tools: ['ops__deploy_service', 'shared__lookup_weather'], plugins: ['ops', 'shared'], categories: ['deploys', 'weather'], workspace: 'ws2' },
  f: {
    tools: ['shared__a_private_report', 'shared__lookup_weather', 'shared__payroll_export'],
    plugins: ['shared'],
    categories: ['payroll', 'reports', 'weather'],
    workspace: 'default',
  },
};
const ALL_TOOLS = ['finance__wire_money', 'ops__deploy_service', 'shared__a_private_report', 'shared__b_private_report', 'shared__lookup_weather', 'shared__payroll_export'];
const PAGES: Record<string, string> = { weather: 'weather', reports: 'reports', payroll: 'payroll', payments: 'payments', deploys: 'deploys' };
const TENANTS: Tenant[] = ['a', 'b', 'w', 'f'];

describeEachBackend('tenant matrix over every read endpoint', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let home: string;
  let admin: string;
  let ws2Id: string;
  const keys = {} as Record<Tenant, string>;
  const ids: Record<string, string> = {};
  const events = {} as Record<Tenant, string[]>;

  const call = (method: string, path: string, key: string, body?: unknown) => requestJson<Json>(api, method, path, key, body);
  const ok = async (path: string, key: string) => {
    const response = await call('GET', path, key);
    assert.equal(response.status, 200, `${path}: ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const sorted = (values: Iterable<string>) => [...new Set(values)].sort();
  const qualified = (rows: unknown) => sorted((rows as Array<{ qualifiedName: string }>).map((row) => row.qualifiedName));
  const idToName = (id: string) => Object.entries(ids).find(([, value]) => value === id)?.[0] ?? `unknown:${id}`;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-tenant-matrix-'));
    const db = await backend.open();
    // Manual embeddings: every tool stays un-embedded, so drift lists each visible tool.
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_EMBEDDINGS: 'manual' }), { db });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;

    await app.catalog.syncPlugin({
      pluginId: 'shared',
      version: '1.0.0',
      categories: [{ name: 'weather' }, { name: 'reports' }, { name: 'payroll' }],
      pageMappings: [
        { pagePattern: 'weather', category: 'weather' },
        { pagePattern: 'reports', category: 'reports' },
        { pagePattern: 'payroll', category: 'payroll' },
      ],
      tools: [
        { name: 'lookup_weather', description: 'Current weather for a city', category: 'weather' },
        { name: 'a_private_report', description: 'Quarterly weather report for org A', orgId: 'org-a', category: 'reports' },
        { name: 'b_private_report', description: 'Quarterly weather report for org B', orgId: 'org-b', category: 'reports' },
        { name: 'payroll_export', description: 'Export the payroll report', category: 'payroll' },
      ],
    });
    await app.catalog.syncPlugin({
      pluginId: 'finance',
      version: '1.0.0',
      categories: [{ name: 'payments' }],
      pageMappings: [{ pagePattern: 'payments', category: 'payments' }],
      tools: [{ name: 'wire_money', description: 'Send a wire transfer of money', category: 'payments' }],
    });
    await app.catalog.syncPlugin({
      pluginId: 'ops',
      version: '1.0.0',
      categories: [{ name: 'deploys' }],
      pageMappings: [{ pagePattern: 'deploys', category: 'deploys' }],
      tools: [{ name: 'deploy_service', description: 'Deploy a service report', category: 'deploys' }],
    });
    for (const name of ALL_TOOLS) ids[name] = (await app.catalog.getToolByQualifiedName(name)).id;

    // Org A may not use the finance plugin; payroll only for the finance role.
    const finance = await app.catalog.getToolByQualifiedName('finance__wire_money');
    await app.catalog.createVisibilityRule({ ruleType: 'org', effect: 'deny', pluginId: finance.pluginId!, conditions: { orgIds: ['org-a'] }, priority: 10 });
    // No key here has a tier, so this deny always applies (an undecidable condition denies).
    await app.catalog.createVisibilityRule({ ruleType: 'tier', effect: 'deny', toolId: ids['shared__payroll_export']!, conditions: { tier: { notIn: ['government'] } }, priority: 1 });
    await app.catalog.createVisibilityRule({ ruleType: 'role', effect: 'allow', toolId: ids['shared__payroll_export']!, conditions: { roles: ['finance'] }, priority: 10 });

    // Workspace ws2: shared and ops; the default workspace: shared and finance.
    ws2Id = (await app.plugins.createWorkspace({ name: 'ws2' })).id;
    await app.plugins.enable('shared', { workspace: 'ws2' });
    await app.plugins.enable('ops', { workspace: 'ws2' });
    await app.plugins.disable('ops', { workspace: 'default' });

    const scopes = ['read', 'select'] as ('read' | 'select')[];
    keys.a = (await app.apiKeys.create({ name: 'org a', scopes, orgId: 'org-a' })).key;
    keys.b = (await app.apiKeys.create({ name: 'org b', scopes, orgId: 'org-b' })).key;
    keys.w = (await app.apiKeys.create({ name: 'ws2', scopes, workspaceId: ws2Id })).key;
    keys.f = (await app.apiKeys.create({ name: 'org a finance', scopes, orgId: 'org-a', roles: ['finance'] })).key;

    // Selection events with outcomes for each tenant (two each; the second keeps no outcome).
    for (const tenant of TENANTS) {
      events[tenant] = [];
      for (const query of ['weather report', 'wire money payroll deploy']) {
        const selected = await call('POST', '/v1/select', keys[tenant], { query, k: 10 });
        assert.equal(selected.status, 200, JSON.stringify(selected.body));
        events[tenant].push((selected.body.metadata as { eventId: string }).eventId);
      }
      const outcome = await call('POST', '/v1/outcomes', keys[tenant], { eventId: events[tenant][0], toolsCalled: ['shared__lookup_weather'], success: true });
      assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
    }
    await app.selection.flush();
    assert.equal((await call('POST', '/api/v1/plugins/shared/intelligence', admin)).status, 201);
    // An operator's setting: plain, but not for tenants (it may name internal hosts).
    await app.plugins.setEnv('shared', 'INTERNAL_URL', 'http://10.0.0.5:8080');
  });
  after(async () => {
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('the hub holds every case (admin sees all of it)', async () => {
    assert.deepEqual(qualified((await ok('/internal/tool-registry/tools', admin)).tools), ALL_TOOLS);
    const drift = await ok('/internal/tool-registry/analytics/drift?maxAgeDays=1', admin);
    assert.deepEqual(qualified(drift.tools), ALL_TOOLS);
    assert.equal((await ok('/internal/tool-registry/analytics/metrics', admin)).total, TENANTS.length * 2);
  });

  it('tools: list, detail and versions', async () => {
    for (const tenant of TENANTS) {
      const expected = EXPECTED[tenant].tools;
      assert.deepEqual(qualified((await ok('/internal/tool-registry/tools', keys[tenant])).tools), expected, tenant);
      for (const name of ALL_TOOLS) {
        const status = expected.includes(name) ? 200 : 404;
        assert.equal((await call('GET', `/internal/tool-registry/tools/${ids[name]}`, keys[tenant])).status, status, `${tenant} ${name}`);
        assert.equal((await call('GET', `/internal/tool-registry/tools/${ids[name]}/versions`, keys[tenant])).status, status, `${tenant} ${name} versions`);
      }
    }
  });

  it('categories (flat and tree), categories for a page and page mappings', async () => {
    const treeNames = (nodes: unknown): string[] =>
      (nodes as Array<{ name: string; children: unknown }>).flatMap((node) => [node.name, ...treeNames(node.children)]);
    for (const tenant of TENANTS) {
      const expected = EXPECTED[tenant].categories;
      const flat = await ok('/internal/tool-registry/categories?flat=true', keys[tenant]);
      assert.deepEqual(sorted((flat.categories as Array<{ name: string }>).map((c) => c.name)), expected, tenant);
      assert.deepEqual(sorted(treeNames((await ok('/internal/tool-registry/categories', keys[tenant])).categories)), expected, `${tenant} tree`);
      const mappings = await ok('/internal/tool-registry/page-mappings', keys[tenant]);
      assert.deepEqual(sorted((mappings.mappings as Array<{ categoryName: string }>).map((m) => m.categoryName)), expected, `${tenant} mappings`);
      for (const [category, page] of Object.entries(PAGES)) {
        const forPage = await ok(`/internal/tool-registry/categories/for-page/${page}`, keys[tenant]);
        const names = (forPage.categories as Array<{ categoryName: string }>).map((c) => c.categoryName);
        assert.deepEqual(names, expected.includes(category) ? [category] : [], `${tenant} page ${page}`);
      }
    }
    // A hidden plugin's scope reads as an unknown plugin.
    assert.equal((await call('GET', '/internal/tool-registry/categories?pluginName=finance', keys.a)).status, 404);
    assert.equal((await call('GET', '/internal/tool-registry/page-mappings?pluginName=finance', keys.b)).status, 200);
    assert.equal((await call('GET', '/internal/tool-registry/visibility-rules', keys.f)).status, 403);
  });

  it('plugins: list, show, tools, health, intelligence; workspaces', async () => {
    for (const tenant of TENANTS) {
      const { plugins, tools, workspace } = EXPECTED[tenant];
      const listed = await ok('/api/v1/plugins', keys[tenant]);
      assert.deepEqual(sorted((listed.plugins as Array<{ name: string }>).map((p) => p.name)), plugins, tenant);
      const health = await ok('/api/v1/plugins/health', keys[tenant]);
      assert.deepEqual(sorted((health.plugins as Array<{ name: string }>).map((p) => p.name)), plugins, `${tenant} health`);
      for (const plugin of ['shared', 'finance', 'ops']) {
        const shown = await call('GET', `/api/v1/plugins/${plugin}`, keys[tenant]);
        const own = tools.filter((name) => name.startsWith(`${plugin}__`));
        if (!plugins.includes(plugin)) {
          assert.equal(shown.status, 404, `${tenant} ${plugin}`);
          assert.equal((await call('GET', `/api/v1/plugins/${plugin}/tools`, keys[tenant])).status, 404);
          continue;
        }
        assert.equal(shown.status, 200);
        assert.equal(shown.body.toolCount, own.length, `${tenant} ${plugin} toolCount`);
        assert.deepEqual(shown.body.env, [], `${tenant} ${plugin} sees no operator settings`);
        assert.equal(shown.body.stateDir, null, `${tenant} ${plugin} sees no host paths`);
        const enablements = shown.body.enablements as Array<{ workspace: string }>;
        assert.ok(enablements.length > 0 && enablements.every((row) => row.workspace === workspace), `${tenant} ${plugin} enablements`);
        assert.deepEqual(qualified((await ok(`/api/v1/plugins/${plugin}/tools`, keys[tenant])).tools), own, `${tenant} ${plugin} tools`);
      }
      const pidTools = (document: Json) => sorted(((document.pid as { tools: Array<{ name: string }> }).tools).map((tool) => `shared__${tool.name}`));
      const ownShared = tools.filter((name) => name.startsWith('shared__'));
      assert.deepEqual(pidTools(await ok('/api/v1/plugins/shared/intelligence', keys[tenant])), ownShared, `${tenant} PID`);
      const exported = (await ok('/api/v1/plugins/intelligence/export', keys[tenant])).documents as Json[];
      assert.deepEqual(exported.map((document) => document.pluginName), ['shared']);
      assert.deepEqual(pidTools(exported[0]!), ownShared, `${tenant} exported PID`);
      const found = (await ok('/api/v1/plugins/intelligence/search?q=report', keys[tenant])).results as Array<{ document: Json }>;
      for (const result of found) assert.deepEqual(pidTools(result.document), ownShared, `${tenant} searched PID`);
      const workspaces = await ok('/api/v1/workspaces', keys[tenant]);
      assert.deepEqual((workspaces.workspaces as Array<{ name: string }>).map((w) => w.name), [workspace], `${tenant} workspaces`);
    }
    assert.equal(pidToolCount(await ok('/api/v1/plugins/shared/intelligence', admin)), 4, 'admins read the whole PID');
    const asAdmin = await ok('/api/v1/plugins/shared', admin);
    assert.deepEqual((asAdmin.env as Array<{ key: string; value: string }>).map(({ key, value }) => [key, value]), [['INTERNAL_URL', 'http://10.0.0.5:8080']]);
  });

  it('analytics: metrics, heatmap, accuracy and drift are the tenant’s own', async () => {
    for (const tenant of TENANTS) {
      const visible = new Set(EXPECTED[tenant].tools);
      const metrics = await ok('/internal/tool-registry/analytics/metrics', keys[tenant]);
      // org-a's two keys share an organisation and a workspace: their events are one tenant's.
      const own = tenant === 'a' || tenant === 'f' ? 4 : 2;
      assert.equal(metrics.total, own, `${tenant} metrics`);
      const heatmap = await ok('/internal/tool-registry/analytics/heatmap?limit=100', keys[tenant]);
      const cells = heatmap.cells as Array<{ toolId: string }>;
      assert.ok(cells.length > 0, `${tenant} heatmap has cells`);
      for (const cell of cells) assert.ok(visible.has(idToName(cell.toolId)), `${tenant} heatmap shows ${idToName(cell.toolId)}`);
      const accuracy = await ok('/internal/tool-registry/analytics/accuracy', keys[tenant]);
      const outcomes = (accuracy.trend as Array<{ outcomes: number }>).reduce((sum, day) => sum + day.outcomes, 0);
      assert.equal(outcomes, own / 2, `${tenant} accuracy`);
      const drift = await ok('/internal/tool-registry/analytics/drift?maxAgeDays=1', keys[tenant]);
      assert.deepEqual(qualified(drift.tools), EXPECTED[tenant].tools, `${tenant} drift`);
      assert.equal((await call('GET', '/internal/tool-registry/analytics/metrics?orgId=org-b', keys[tenant])).status, tenant === 'b' ? 200 : 403);
    }
    // The role-gated tool the finance key was offered is not in plain org-a's heatmap... but
    // both keys share the org-a event pool, so the filter (not the events) must keep it out.
    const heatA = (await ok('/internal/tool-registry/analytics/heatmap?limit=100', keys.a)).cells as Array<{ toolId: string }>;
    const heatF = (await ok('/internal/tool-registry/analytics/heatmap?limit=100', keys.f)).cells as Array<{ toolId: string }>;
    assert.ok(heatF.some((cell) => idToName(cell.toolId) === 'shared__payroll_export'), 'the finance key was offered payroll');
    assert.ok(!heatA.some((cell) => idToName(cell.toolId) === 'shared__payroll_export'));
  });

  it('selection offers exactly the tenant’s tools; outcomes reach only its own events', async () => {
    for (const tenant of TENANTS) {
      const selected = await call('POST', '/v1/select', keys[tenant], { query: 'weather report wire money payroll deploy', k: 50 });
      assert.equal(selected.status, 200);
      assert.equal((selected.body.metadata as { candidateCount: number }).candidateCount, EXPECTED[tenant].tools.length, tenant);
      for (const name of qualified(selected.body.tools)) assert.ok(EXPECTED[tenant].tools.includes(name), `${tenant} offered ${name}`);
      for (const other of TENANTS) {
        const sameTenant = other === tenant || (['a', 'f'].includes(other) && ['a', 'f'].includes(tenant));
        const response = await call('POST', '/v1/outcomes', keys[tenant], { eventId: events[other][1], toolsCalled: [], success: true });
        // An event of the same org and workspace can be reported once; another's reads as missing.
        if (!sameTenant) assert.equal(response.status, 404, `${tenant} → ${other}`);
      }
    }
    assert.equal((await call('POST', '/internal/tool-registry/test-selection', keys.a, { query: 'x' })).status, 403);
    const asA = await call('POST', '/internal/tool-registry/test-selection', admin, { query: 'weather', k: 50, context: { orgId: 'org-a' } });
    assert.equal((asA.body.metadata as { candidateCount: number }).candidateCount, EXPECTED.a.tools.length, 'an admin selects for any context');
  });

  it('an organisation’s event in ws2 is not the org-less ws2 key’s to report (nor another workspace’s key’s)', async () => {
    const selected = await call('POST', '/v1/select', admin, { query: 'weather report', k: 10, context: { orgId: 'org-a', workspace: 'ws2' } });
    assert.equal(selected.status, 200, JSON.stringify(selected.body));
    const eventId = (selected.body.metadata as { eventId: string }).eventId;
    for (const tenant of ['w', 'a'] as const) {
      const response = await call('POST', '/v1/outcomes', keys[tenant], { eventId, toolsCalled: ['shared__lookup_weather'], success: true });
      assert.equal(response.status, 404, `${tenant}: ${JSON.stringify(response.body)}`);
    }
    const byAdmin = await call('POST', '/v1/outcomes', admin, { eventId, toolsCalled: ['shared__lookup_weather'], success: true });
    assert.equal(byAdmin.status, 200, JSON.stringify(byAdmin.body));
  });

  it('whoami shows each key its own bindings', async () => {
    const principal = async (tenant: Tenant) => (await ok('/api/v1/whoami', keys[tenant])).principal as { orgId: string | null; workspaceId: string | null; roles: string[] };
    const [a, w, f] = [await principal('a'), await principal('w'), await principal('f')];
    assert.deepEqual([a.orgId, a.workspaceId, a.roles], ['org-a', null, []]);
    assert.deepEqual([w.orgId, w.workspaceId, w.roles], [null, ws2Id, []]);
    assert.deepEqual([f.orgId, f.workspaceId, f.roles], ['org-a', null, ['finance']]);
  });

  it('finding 1: bodies that widen the key are refused with 403 naming the field', async () => {
    const refused: Array<[Tenant, Json, string]> = [
      ['w', { orgId: 'org-b' }, 'context.orgId'],
      ['a', { orgId: 'org-b' }, 'context.orgId'],
      ['a', { roles: ['finance'] }, 'context.roles'],
      ['f', { roles: [] }, 'context.roles'],
      ['a', { workspace: 'ws2' }, 'context.workspace'],
      ['a', { workspace: ws2Id }, 'context.workspace'],
      ['a', { workspace: 'no-such-workspace' }, 'context.workspace'],
      ['w', { workspace: 'default' }, 'context.workspace'],
      ['a', { project: 'p1' }, 'context.project'],
      ['a', { userId: 'someone-else' }, 'context.userId'],
      ['a', { tier: 'government' }, 'context.tier'],
    ];
    for (const [tenant, context, field] of refused) {
      for (const path of ['/v1/select']) {
        const response = await call('POST', path, keys[tenant], { query: 'quarterly report', context });
        assert.equal(response.status, 403, `${tenant} ${JSON.stringify(context)}`);
        const error = response.body.error as { code: string; details: { field: string } };
        assert.equal(error.code, 'forbidden');
        assert.equal(error.details.field, field);
      }
    }
    // What the key already is, or only narrower (a page, a session), is accepted.
    const accepted: Array<[Tenant, Json]> = [
      ['a', { orgId: 'org-a', workspace: 'default', page: 'reports', sessionId: 's-1' }],
      ['w', { workspace: 'ws2' }],
      ['w', { workspace: ws2Id }],
      ['f', { roles: ['finance'], orgId: 'org-a' }],
    ];
    for (const [tenant, context] of accepted) {
      const response = await call('POST', '/v1/select', keys[tenant], { query: 'quarterly report', k: 50, context });
      assert.equal(response.status, 200, `${tenant} ${JSON.stringify(context)}: ${JSON.stringify(response.body)}`);
      assert.equal((response.body.metadata as { candidateCount: number }).candidateCount, EXPECTED[tenant].tools.length);
    }
  });
});

function pidToolCount(document: Json): number {
  return ((document.pid as { tools: unknown[] }).tools).length;
}
