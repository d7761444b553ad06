/**
 * Two organisations with different rules never see each other's tools, through any endpoint
 * a tenant key can call (DESIGN §3.9, issue: selection "through any endpoint").
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

describeEachBackend('tenant isolation across the HTTP API', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let home: string;
  let admin: string;
  let keyA: string;
  let keyB: string;
  const ids: Record<string, string> = {};

  const call = (method: string, path: string, key: string, body?: unknown) => requestJson<Record<string, unknown>>(api, method, path, key, body);
  const names = (tools: unknown) => (tools as Array<{ qualifiedName: string }>).map((t) => t.qualifiedName).sort();

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-tenancy-'));
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    keyA = (await app.apiKeys.create({ name: 'org a', scopes: ['read', 'select'], orgId: 'org-a' })).key;
    keyB = (await app.apiKeys.create({ name: 'org b', scopes: ['read', 'select'], orgId: 'org-b' })).key;
    await app.catalog.syncPlugin({
      pluginId: 'shared',
      version: '1.0.0',
      tools: [
        { name: 'lookup_weather', description: 'Current weather for a city' },
        { name: 'a_private_report', description: 'Quarterly weather report for org A', orgId: 'org-a' },
        { name: 'b_private_report', description: 'Quarterly weather report for org B', orgId: 'org-b' },
      ],
    });
    await app.catalog.syncPlugin({ pluginId: 'finance', version: '1.0.0', tools: [{ name: 'wire_money', description: 'Send a wire transfer of money' }] });
    const finance = await app.catalog.getToolByQualifiedName('finance__wire_money');
    // Org A may not use the finance plugin.
    await app.catalog.createVisibilityRule({ ruleType: 'org', effect: 'deny', pluginId: finance.pluginId!, conditions: { orgIds: ['org-a'] }, priority: 10 });
    for (const name of ['shared__a_private_report', 'shared__b_private_report', 'finance__wire_money']) {
      ids[name] = (await app.catalog.getToolByQualifiedName(name)).id;
    }
  });
  after(async () => {
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('tool lists show each organisation only its own tools', async () => {
    const a = await call('GET', '/internal/tool-registry/tools', keyA);
    assert.deepEqual(names(a.body.tools), ['shared__a_private_report', 'shared__lookup_weather']);
    const b = await call('GET', '/internal/tool-registry/tools', keyB);
    assert.deepEqual(names(b.body.tools), ['finance__wire_money', 'shared__b_private_report', 'shared__lookup_weather']);
    const all = await call('GET', '/internal/tool-registry/tools', admin);
    assert.equal((all.body.tools as unknown[]).length, 4);
  });

  it('another organisation\'s tool is not found by id, nor its history', async () => {
    assert.equal((await call('GET', `/internal/tool-registry/tools/${ids['shared__b_private_report']}`, keyA)).status, 404);
    assert.equal((await call('GET', `/internal/tool-registry/tools/${ids['finance__wire_money']}/versions`, keyA)).status, 404);
    assert.equal((await call('GET', `/internal/tool-registry/tools/${ids['shared__b_private_report']}`, keyB)).status, 200);
  });

  it('rules are not readable by tenants', async () => {
    assert.equal((await call('GET', '/internal/tool-registry/visibility-rules', keyA)).status, 403);
    assert.equal((await call('GET', '/internal/tool-registry/visibility-rules', admin)).status, 200);
  });

  it('plugin endpoints hide plugins and tools the tenant cannot see', async () => {
    const plugins = await call('GET', '/api/v1/plugins', keyA);
    assert.deepEqual((plugins.body.plugins as Array<{ name: string }>).map((p) => p.name), ['shared']);
    assert.equal((await call('GET', '/api/v1/plugins/finance', keyA)).status, 404);
    assert.equal((await call('GET', '/api/v1/plugins/finance/tools', keyA)).status, 404);
    const tools = await call('GET', '/api/v1/plugins/shared/tools', keyB);
    assert.deepEqual(names(tools.body.tools), ['shared__b_private_report', 'shared__lookup_weather']);
    assert.equal((await call('GET', '/api/v1/workspaces/default/tools', keyA)).status, 403);
  });

  it('selection offers each organisation only its own tools, and keys cannot act for another org', async () => {
    const a = await call('POST', '/v1/select', keyA, { query: 'quarterly weather report and wire transfer', k: 10 });
    assert.equal(a.status, 200);
    const offered = (a.body.tools as Array<{ qualifiedName: string }>).map((t) => t.qualifiedName);
    assert.ok(offered.includes('shared__a_private_report'));
    assert.ok(!offered.includes('shared__b_private_report'));
    assert.ok(!offered.includes('finance__wire_money'));
    const spoof = await call('POST', '/v1/select', keyA, { query: 'weather', context: { orgId: 'org-b' } });
    assert.equal(spoof.status, 403);
  });
});
