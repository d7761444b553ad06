/**
 * Trust and egress over HTTP (issue #10), on every backend: reads follow the caller's
 * visibility, trust and egress changes need the admin scope and are recorded with the key,
 * reports are open to any caller that sees the plugin, bad bodies are 400s.
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

describeEachBackend('trust and egress API', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let home: string;
  let admin: string;
  let reader: string;

  const call = (method: string, path: string, key: string, body?: unknown) => requestJson<Record<string, any>>(api, method, path, key, body);

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-trust-api-'));
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_TRUST_EVALUATE_INTERVAL_MS: '0' }), { db });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    reader = (await app.apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
    await app.catalog.syncPlugin({ pluginId: 'weather', version: '1.0.0', tools: [{ name: 'forecast', description: 'Weather forecast for a city' }] });
  });
  after(async () => {
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('shows trust to readers and lets only admins grant, cap or clear it, recorded with the key', async () => {
    const shown = await call('GET', '/api/v1/plugins/weather/trust', reader);
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    assert.equal(shown.body.effective.level, 'UNVERIFIED');
    assert.equal((await call('PUT', '/api/v1/plugins/weather/trust', reader, { level: 'COMMUNITY', reason: 'x' })).status, 403);
    const granted = await call('PUT', '/api/v1/plugins/weather/trust', admin, { level: 'COMMUNITY', reason: 'reviewed' });
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
    assert.equal(granted.body.effective.level, 'COMMUNITY');
    assert.match(granted.body.grant.actor, /^key:[^:]+:/);
    assert.equal(granted.body.grant.reason, 'reviewed');
    for (const bad of [{ level: 'COMMUNITY', cap: 'OFFICIAL', reason: 'x' }, { reason: 'x' }, { level: 'COMMUNITY' }, { level: 'TRUSTED', reason: 'x' }, { clear: true, reason: '' }]) {
      assert.equal((await call('PUT', '/api/v1/plugins/weather/trust', admin, bad)).status, 400, JSON.stringify(bad));
    }
    assert.equal((await call('GET', '/api/v1/plugins/nope/trust', admin)).status, 404);
  });

  it('edits the allow-list with the admin scope and lists rules and decisions', async () => {
    assert.equal((await call('POST', '/api/v1/plugins/weather/egress', reader, { target: 'api.weather.example' })).status, 403);
    const added = await call('POST', '/api/v1/plugins/weather/egress', admin, { target: 'API.weather.example', reason: 'its upstream' });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.deepEqual([added.body.rule.host, added.body.rule.port, added.body.rule.reason], ['api.weather.example', 443, 'its upstream']);
    assert.equal((await call('POST', '/api/v1/plugins/weather/egress', admin, { target: 'api.weather.example:443' })).status, 200);
    assert.equal((await call('POST', '/api/v1/plugins/weather/egress', admin, { target: 'http://x' })).status, 400);
    const listed = await call('GET', '/api/v1/plugins/weather/egress?limit=5', reader);
    assert.equal(listed.status, 200);
    // 'weather' is a synced catalog entry: Quiver runs no process of it, so its rules hold nothing (7590ff9).
    assert.deepEqual([listed.body.enforced, listed.body.remote, listed.body.level], [false, true, 'COMMUNITY']);
    assert.deepEqual(listed.body.rules.map((rule: { host: string }) => rule.host), ['api.weather.example']);
    assert.deepEqual((await call('GET', '/api/v1/plugins/weather/egress/decisions', reader)).body, { decisions: [] });
    assert.equal((await call('DELETE', `/api/v1/plugins/weather/egress/${encodeURIComponent('api.weather.example:443')}`, reader)).status, 403);
    assert.deepEqual((await call('DELETE', `/api/v1/plugins/weather/egress/${encodeURIComponent('api.weather.example:443')}`, admin)).body, { removed: true });
  });

  it('takes a report from any caller that sees the plugin', async () => {
    const reported = await call('POST', '/api/v1/plugins/weather/reports', reader, { reason: 'asked for my password' });
    assert.equal(reported.status, 201, JSON.stringify(reported.body));
    assert.match(reported.body.report.actor, /^key:[^:]+:reader$/);
    assert.equal(reported.body.runtime.factors.userReports, 1);
    assert.equal((await call('POST', '/api/v1/plugins/weather/reports', reader, {})).status, 400);
  });
});
