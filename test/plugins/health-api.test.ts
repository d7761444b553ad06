/**
 * `GET /api/v1/plugins/health` and `GET /api/v1/plugins/:id/calls` on the app as the
 * composition root wires it: plugins installed from folders run sandboxed under the app's
 * supervisor, every call is recorded through `onCall` into plugin_call_events, and the
 * responses join the live process view (breaker, crash loop, score) with the persisted
 * aggregates; tenant keys see only their visible plugins. Every backend.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createApi } from '../../src/api/app.ts';
import { eventually } from '../runtime/helpers.ts';
import { breakRawPlugin, createRawPluginFolder } from './raw-server.ts';

describeEachBackend('plugin health API', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let home: string;
  let admin: string;
  let reader: string;
  let tenant: string;
  let flakyFolder: string;

  const call = async (path: string, key: string) => {
    const response = await api.request(path, { headers: { authorization: `Bearer ${key}` } });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : {} };
  };
  type Entry = { name: string; status: string; process: any; calls: any };
  const byName = (body: { plugins: Entry[] }) => Object.fromEntries(body.plugins.map((plugin) => [plugin.name, plugin]));

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-health-api-'));
    await chmod(home, 0o755); // sandboxed plugins run as an unprivileged user
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    reader = (await app.apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
    tenant = (await app.apiKeys.create({ name: 'org a', scopes: ['read'], orgId: 'org-a' })).key;

    const plugins = join(home, 'sources');
    await app.plugins.add(await createRawPluginFolder(plugins, 'steady'), { name: 'steady' });
    flakyFolder = await createRawPluginFolder(plugins, 'flaky');
    await app.plugins.add(flakyFolder, { name: 'flaky' });
    // Org A may not use flaky.
    const flakyTool = await app.catalog.getToolByQualifiedName('flaky__echo');
    await app.catalog.createVisibilityRule({ ruleType: 'org', effect: 'deny', pluginId: flakyTool.pluginId!, conditions: { orgIds: ['org-a'] }, priority: 10 });

    const steady = await app.plugins.upstreamSpec('steady');
    for (const text of ['one', 'two', 'three']) await app.supervisor.callTool(steady, 'echo', { text });
    assert.equal((await app.supervisor.callTool(steady, 'fail')).isError, true);

    // flaky now dies on every start: restarts back off, then the crash-loop stop holds it.
    await breakRawPlugin(flakyFolder);
    const flaky = await app.plugins.upstreamSpec('flaky');
    const flakyId = flaky.pluginId;
    await eventually(
      async () => {
        await app.supervisor.callTool(flaky, 'echo', { text: 'x' }).catch(() => undefined);
        return app.supervisor.health().some((h) => h.pluginId === flakyId && h.state === 'crash-loop');
      },
      60_000,
      'flaky to reach its crash loop',
    );
    await assert.rejects(app.supervisor.callTool(flaky, 'echo', { text: 'x' }), /crash loop/);
  });
  after(async () => {
    await app.close();
    await rm(home, { recursive: true, force: true });
  });

  it('reports every plugin: status, live process health and persisted call aggregates', async () => {
    const { status, body } = await call('/api/v1/plugins/health', reader);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.window, '1h');
    const plugins = byName(body);
    assert.deepEqual(Object.keys(plugins).sort(), ['flaky', 'steady']);

    const steady = plugins['steady']!;
    assert.equal(steady.status, 'active');
    assert.equal(steady.process.state, 'running');
    assert.equal(typeof steady.process.pid, 'number');
    assert.equal(steady.process.breaker, 'closed');
    assert.equal(steady.process.crashLoop, false);
    assert.ok(steady.process.score > 50);
    assert.deepEqual(
      [steady.calls.calls, steady.calls.successes, steady.calls.errors, steady.calls.timeouts, steady.calls.rejected],
      [4, 3, 1, 0, 0],
    );
    assert.deepEqual(steady.calls.errorClasses, { tool_error: 1 });
    assert.equal(steady.calls.successRate, 0.75);
    assert.equal(typeof steady.calls.p50LatencyMs, 'number');
    assert.equal(typeof steady.calls.p95LatencyMs, 'number');

    const flaky = plugins['flaky']!;
    assert.equal(flaky.status, 'active');
    assert.equal(flaky.process.state, 'crash-loop');
    assert.equal(flaky.process.crashLoop, true);
    assert.equal(flaky.process.score, 0);
    assert.ok(flaky.process.recentCrashes >= 5, JSON.stringify(flaky.process));
    assert.ok(Date.parse(flaky.process.crashLoopUntil) > Date.now());
    assert.match(flaky.process.lastError, /raw fixture: crashing on start|exit|closed/i);
    assert.equal(flaky.calls.successes, 0);
    assert.ok(flaky.calls.errors >= 5, JSON.stringify(flaky.calls));
    assert.ok(flaky.calls.rejected >= 1, 'the call that found the crash loop was rejected');
    assert.equal(flaky.process.launch, undefined, 'launch details stay out of the response');
  });

  it('reports per-tool aggregates, and validates the window', async () => {
    const tools = await call('/api/v1/plugins/steady/calls?window=15m', reader);
    assert.equal(tools.status, 200, JSON.stringify(tools.body));
    assert.equal(tools.body.window, '15m');
    assert.equal(tools.body.plugin.name, 'steady');
    assert.deepEqual(
      tools.body.tools.map((t: { toolName: string; calls: number; successes: number }) => [t.toolName, t.calls, t.successes]),
      [['echo', 3, 3], ['fail', 1, 0]],
    );
    const byId = await call(`/api/v1/plugins/${tools.body.plugin.id}/calls?window=24h`, reader);
    assert.equal(byId.status, 200);
    assert.equal(byId.body.tools.length, 2);

    for (const window of ['1w', '0h', 'abc', '40d']) {
      const bad = await call(`/api/v1/plugins/health?window=${window}`, reader);
      assert.equal(bad.status, 400, window);
      assert.equal(bad.body.error.code, 'invalid_input');
      assert.equal((await call(`/api/v1/plugins/steady/calls?window=${window}`, reader)).status, 400);
    }
    assert.equal((await call('/api/v1/plugins/nope/calls', reader)).status, 404);
    const narrow = await call('/api/v1/plugins/health?window=15m', admin);
    assert.equal(narrow.status, 200);
    assert.equal(byName(narrow.body)['steady']!.calls.calls, 4);
  });

  it('needs a key with the read scope; tenant keys see only their visible plugins', async () => {
    assert.equal((await api.request('/api/v1/plugins/health')).status, 401);
    const mcpOnly = (await app.apiKeys.create({ name: 'mcp only', scopes: ['mcp'] })).key;
    assert.equal((await call('/api/v1/plugins/health', mcpOnly)).status, 403);

    const seen = await call('/api/v1/plugins/health', tenant);
    assert.equal(seen.status, 200);
    assert.deepEqual(seen.body.plugins.map((plugin: Entry) => plugin.name), ['steady']);
    assert.equal((await call('/api/v1/plugins/flaky/calls', tenant)).status, 404);
    assert.equal((await call('/api/v1/plugins/steady/calls', tenant)).status, 200);
  });

  it('keeps the other plugin routes working beside the static health path', async () => {
    assert.equal((await call('/api/v1/plugins/steady', reader)).status, 200);
    assert.equal((await call('/api/v1/plugins/steady/tools', reader)).body.tools.length, 2);
  });
});
