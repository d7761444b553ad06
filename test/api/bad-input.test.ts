/**
 * Regression tests of issue #18, findings 2 and 7, on both backends: one request's bad row
 * never drops another tenant's selection events, and bad text (NUL bytes in a body, a key, a
 * path segment or a query parameter; nesting 5,000 deep; ids that are not UUIDs) answers 400
 * or 404, never 500.
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
import { createSelectionEngine } from '../../src/selection/index.ts';

describeEachBackend('bad input never reaches a 500, nor another request', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let home: string;
  let admin: string;
  let keyA: string;
  let keyB: string;
  let readKey: string;

  const call = async (method: string, path: string, key: string | undefined, body?: string) => {
    const response = await api.request(path, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
  };
  const eventCount = async (orgId: string) =>
    Number((await app.db.query<{ n: number }>('SELECT count(*) AS n FROM tool_selection_events WHERE org_id = $1', [orgId])).rows[0]!.n);

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-bad-input-'));
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    keyA = (await app.apiKeys.create({ name: 'org a', scopes: ['read', 'select'], orgId: 'org-a' })).key;
    keyB = (await app.apiKeys.create({ name: 'org b', scopes: ['read', 'select'], orgId: 'org-b' })).key;
    readKey = (await app.apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
    await app.catalog.syncPlugin({
      pluginId: 'shared',
      version: '1.0.0',
      tools: [
        { name: 'echo', description: 'Echo the given text back' },
        { name: 'lookup_weather', description: 'Current weather for a city' },
      ],
    });
  });
  after(async () => {
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('finding 2: 20 selects of tenant B beside one NUL query → the NUL query is a 400, all 20 events stored, B\'s outcomes answer 200', async () => {
    const before = await eventCount('org-b');
    const requests = Array.from({ length: 20 }, () => call('POST', '/v1/select', keyB, JSON.stringify({ query: 'echo' })));
    requests.push(call('POST', '/v1/select', keyA, JSON.stringify({ query: 'echo\u0000' })));
    const responses = await Promise.all(requests);
    const nul = responses.pop()!;
    assert.equal(nul.status, 400);
    assert.equal(nul.body.error.code, 'invalid_input');
    assert.ok(responses.every((r) => r.status === 200), JSON.stringify(responses.map((r) => r.status)));
    await app.selection.flush();
    assert.equal((await eventCount('org-b')) - before, 20);
    for (const response of responses) {
      const outcome = await call('POST', '/v1/outcomes', keyB, JSON.stringify({ eventId: response.body.metadata.eventId, toolsCalled: ['shared__echo'], success: true }));
      assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
    }
  });

  it('finding 2 below the HTTP boundary: a NUL query in the same event batch as 20 of B\'s selects is refused alone', async () => {
    // An engine whose events wait for an explicit flush, so all 21 share one batch for certain.
    // (Batched on purpose: on PostgreSQL the app's events are written through, issue #23; the next test covers that.)
    const engine = createSelectionEngine({ db: app.db, events: { flushMs: 3_600_000, batchSize: 1_000, durability: { kind: 'batched' } } });
    try {
      const before = await eventCount('org-b');
      const results = await Promise.all(Array.from({ length: 20 }, () => engine.selectTools({ query: 'weather', context: { orgId: 'org-b' }, log: true })));
      const nul = await engine.selectTools({ query: 'echo\u0000', context: { orgId: 'org-a' }, log: true });
      assert.equal(await eventCount('org-b'), before, 'nothing written before the flush');
      await engine.flush();
      assert.equal((await eventCount('org-b')) - before, 20);
      assert.equal((await app.db.query('SELECT 1 FROM tool_selection_events WHERE id = $1', [nul.metadata.eventId])).rows.length, 0);
      const outcome = await engine.recordOutcome(results[7]!.metadata.eventId!, { toolsCalled: [], success: false }, { orgId: 'org-b' });
      assert.ok(outcome);
      // And through the API, B's outcome for one of those events answers 200.
      const response = await call('POST', '/v1/outcomes', keyB, JSON.stringify({ eventId: results[3]!.metadata.eventId, toolsCalled: [], success: true }));
      assert.equal(response.status, 200, JSON.stringify(response.body));
    } finally {
      await engine.close();
    }
  });

  it('finding 2, written through (PostgreSQL\'s durability, issue #23): a NUL query among 20 concurrent selects does not cost them their ids', async () => {
    const engine = createSelectionEngine({ db: app.db, events: { durability: { kind: 'write-through' } } });
    try {
      const before = await eventCount('org-b');
      const pending = Array.from({ length: 20 }, () => engine.selectTools({ query: 'weather', context: { orgId: 'org-b' }, log: true }));
      pending.push(engine.selectTools({ query: 'echo\u0000', context: { orgId: 'org-a' }, log: true }));
      const results = await Promise.all(pending);
      results.pop();
      assert.ok(results.every((result) => typeof result.metadata.eventId === 'string'), 'every select got a durable id');
      assert.equal((await eventCount('org-b')) - before, 20, 'written before the answers, no flush needed');
    } finally {
      await engine.close();
    }
  });

  it('finding 7: NUL bytes in a body string, a body key, a path segment and a query parameter are 400s for every scope', async () => {
    const cases: Array<[string, string, string | undefined]> = [
      ['POST', '/api/v1/keys', JSON.stringify({ name: 'a\u0000', scopes: ['read'] })],
      ['POST', '/api/v1/keys', JSON.stringify({ name: 'a', scopes: ['read'], ['x\u0000']: 1 })],
      ['POST', '/v1/select', JSON.stringify({ query: 'weather', context: { page: '/p\u0000' } })],
      ['GET', '/api/v1/plugins/a%00b', undefined],
      ['GET', '/api/v1/plugins/shared%00', undefined],
      ['GET', '/internal/tool-registry/tools/x%00y', undefined],
      ['GET', '/internal/tool-registry/categories/for-page/a%00b', undefined],
      ['GET', '/api/v1/workspaces/default%00/projects', undefined],
      ['GET', '/internal/tool-registry/tools?search=a%00', undefined],
      ['GET', '/internal/tool-registry/analytics/metrics?org%00Id=x', undefined],
      ['GET', '/healthz?q=%00', undefined],
    ];
    for (const key of [admin, keyA, readKey]) {
      for (const [method, path, body] of cases) {
        const response = await call(method, path, key, body);
        // A scope check may answer first (403); what never happens is a 500.
        assert.ok([400, 403].includes(response.status), `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
        if (key === admin) assert.equal(response.status, 400, `${method} ${path} as admin`);
      }
    }
  });

  it('finding 7: a 5,000-deep intelligence document (and any body deeper than 64) is a 400', async () => {
    const deep = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
    const put = await call('PUT', '/api/v1/plugins/shared/intelligence', admin, `{"document":${deep}}`);
    assert.equal(put.status, 400);
    assert.match(put.body.error.message, /nested deeper than 64/);
    const root = await call('PUT', '/api/v1/plugins/shared/intelligence', admin, deep);
    assert.equal(root.status, 400);
    // 64 levels are still a document (the PID validator then judges its content: not a 500 either).
    const shallow = await call('PUT', '/api/v1/plugins/shared/intelligence', admin, '{"a":'.repeat(63) + '1' + '}'.repeat(63));
    assert.ok(shallow.status === 400 || shallow.status === 200, String(shallow.status));
    assert.doesNotMatch(JSON.stringify(shallow.body), /nested deeper/);
    const select = await call('POST', '/v1/select', keyA, `{"query":"weather","context":${deep}}`);
    assert.equal(select.status, 400);
  });

  it('finding 7: ids that are not UUIDs answer 404 or 400 on every :id route, never 500', async () => {
    const ids = ['abc', 'not-a-uuid', '00000000-0000-0000-0000-00000000000g', "1'; DROP TABLE tools; --", '%E0%A4%A', 'x'.repeat(300)];
    const routes: Array<[string, (id: string) => string, string | undefined]> = [
      ['DELETE', (id) => `/api/v1/keys/${id}`, undefined],
      ['GET', (id) => `/internal/tool-registry/tools/${id}`, undefined],
      ['PUT', (id) => `/internal/tool-registry/tools/${id}`, JSON.stringify({ description: 'x' })],
      ['DELETE', (id) => `/internal/tool-registry/tools/${id}`, undefined],
      ['GET', (id) => `/internal/tool-registry/tools/${id}/versions`, undefined],
      ['POST', (id) => `/internal/tool-registry/tools/${id}/rollback`, JSON.stringify({ version: 1 })],
      ['PUT', (id) => `/internal/tool-registry/categories/${id}`, JSON.stringify({ name: 'x' })],
      ['DELETE', (id) => `/internal/tool-registry/categories/${id}`, undefined],
      ['PUT', (id) => `/internal/tool-registry/page-mappings/${id}`, JSON.stringify({ pagePattern: '/x' })],
      ['DELETE', (id) => `/internal/tool-registry/page-mappings/${id}`, undefined],
      ['PUT', (id) => `/internal/tool-registry/visibility-rules/${id}`, JSON.stringify({ priority: 1 })],
      ['DELETE', (id) => `/internal/tool-registry/visibility-rules/${id}`, undefined],
      ['GET', (id) => `/api/v1/plugins/${id}`, undefined],
      ['DELETE', (id) => `/api/v1/plugins/${id}`, undefined],
      ['GET', (id) => `/api/v1/plugins/${id}/calls`, undefined],
      ['POST', () => '/v1/outcomes', undefined],
    ];
    for (const [method, path, body] of routes) {
      for (const id of ids) {
        const payload = path(id) === '/v1/outcomes' ? JSON.stringify({ eventId: id, toolsCalled: [], success: true }) : body;
        const response = await call(method, path(encodeURI(id).replace(/%25/g, '%')), admin, payload);
        assert.ok([400, 404].includes(response.status), `${method} ${path(id)}: ${response.status} ${JSON.stringify(response.body)}`);
      }
    }
  });

  it('the server is healthy afterwards', async () => {
    const select = await call('POST', '/v1/select', keyA, JSON.stringify({ query: 'weather in paris' }));
    assert.equal(select.status, 200);
    assert.ok(select.body.tools.length > 0);
    assert.equal((await call('GET', '/internal/tool-registry/tools', admin)).status, 200);
  });
});
