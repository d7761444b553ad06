/**
 * The learned-example API routes (issue #13), every backend: a tenant key reads only its own
 * organisation's examples and never who taught them; deletes and the learning switch need an
 * admin key; unknown tools are 404.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createApi } from '../../src/api/app.ts';
import { LEARNING_TOOLS, PARAPHRASE } from './catalog-fixture.ts';
import { requestJson } from '../helpers/api.ts';

describeEachBackend('learned example API routes (issue #13)', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let home: string;
  let admin: string;
  let reader: string;
  let tenantA: string;
  let toolId: string;

  const call = (method: string, path: string, key: string, body?: unknown) => requestJson(api, method, path, key, body);
  const path = () => `/internal/tool-registry/tools/${toolId}/learned-examples`;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-learning-api-'));
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db: await backend.open() });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    reader = (await app.apiKeys.create({ name: 'operator', scopes: ['read'] })).key;
    tenantA = (await app.apiKeys.create({ name: 'org a', scopes: ['read', 'select'], orgId: 'org-a' })).key;
    await app.catalog.syncPlugin({ pluginId: 'kit', version: '1.0.0', tools: LEARNING_TOOLS.map((tool) => ({ ...tool })) });
    toolId = (await app.catalog.getToolByQualifiedName('kit__convert_currency')).id;
    for (const [orgId, userId] of [['org-a', 'u1'], ['org-b', 'u2']] as const) {
      const result = await app.selection.selectTools({ query: `${PARAPHRASE} (${userId})`, k: 10, context: { orgId, userId } });
      await app.selection.recordOutcome(result.metadata.eventId!, { toolsCalled: ['kit__convert_currency'], success: true });
    }
    await app.selection.flush();
  });
  after(async () => {
    await app.close();
    await rm(home, { recursive: true, force: true });
  });

  it('a tenant key sees its own organisation only, without contributors; an operator sees all or one', async () => {
    const tenant = await call('GET', `${path()}?org=org-b`, tenantA);
    assert.equal(tenant.status, 200, JSON.stringify(tenant.body));
    assert.deepEqual(tenant.body.examples.map((row: { orgId: string }) => row.orgId), ['org-a'], 'the key decides the organisation, not ?org=');
    assert.equal(tenant.body.examples[0].contributor, undefined);
    assert.equal(tenant.body.examples[0].text, `${PARAPHRASE} (u1)`);
    const all = await call('GET', path(), reader);
    assert.deepEqual(all.body.examples.map((row: { orgId: string }) => row.orgId).sort(), ['org-a', 'org-b']);
    assert.ok(all.body.examples.every((row: { contributor: string }) => row.contributor.startsWith('user:')));
    assert.deepEqual((await call('GET', `${path()}?org=org-b`, reader)).body.examples.length, 1);
    assert.equal((await call('GET', '/internal/tool-registry/tools/00000000-0000-4000-8000-000000000000/learned-examples', tenantA)).status, 404);
  });

  it('the learning switch and deletes need an admin key', async () => {
    assert.equal((await call('DELETE', path(), tenantA)).status, 403);
    assert.equal((await call('DELETE', path(), reader)).status, 403);
    assert.equal((await call('PUT', `${path()}/enabled`, reader, { enabled: false })).status, 403);
    const off = await call('PUT', `${path()}/enabled`, admin, { enabled: false, org: 'org-b' });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.deepEqual((await call('GET', path(), reader)).body.learning.disabledIn, ['org-b']);
    assert.deepEqual((await call('GET', path(), tenantA)).body.learning.disabledIn, [], "a tenant does not see other organisations' switches");
    assert.equal((await call('PUT', `${path()}/enabled`, admin, { enabled: true, org: 'org-b' })).status, 200);
    assert.equal((await call('PUT', '/internal/tool-registry/tools/00000000-0000-4000-8000-000000000000/learned-examples/enabled', admin, { enabled: false })).status, 404);
    assert.equal((await call('PUT', `${path()}/enabled`, admin, { enabled: 'no' })).status, 400);
    const deleted = await call('DELETE', `${path()}?org=org-b`, admin);
    assert.deepEqual(deleted.body, { deleted: 1 });
    assert.deepEqual((await call('GET', path(), reader)).body.examples.map((row: { orgId: string }) => row.orgId), ['org-a']);
  });
});
