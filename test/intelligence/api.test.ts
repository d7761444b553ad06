/**
 * PID generation over HTTP (issue #14), every backend: an admin generates a plugin's document
 * (here a plugin that registered itself through catalog sync, so discovery is the source and
 * the code sources say there is no folder), reads it with provenance, its staleness and its
 * diff; a read key is refused, an unknown plugin is 404 and an unknown source 400.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { createApi } from '../../src/api/app.ts';
import { loadConfig } from '../../src/config.ts';
import { requestJson } from '../helpers/api.ts';

describeEachBackend('PID generation API', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let home: string;
  let admin: string;
  let reader: string;

  const call = (method: string, path: string, key: string, body?: unknown) => requestJson(api, method, path, key, body);

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-pid-api-'));
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db: await backend.open() });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    reader = (await app.apiKeys.create({ name: 'operator', scopes: ['read'] })).key;
    await app.catalog.syncPlugin({
      pluginId: 'kit',
      version: '1.0.0',
      tools: [
        { name: 'convert_currency', description: 'Convert an amount between two currencies at today\'s rate.', parameters: { type: 'object', properties: { amount: { type: 'number' } } }, annotations: { readOnlyHint: true } },
        { name: 'book_flight', description: 'Book a flight for the traveller.', parameters: { type: 'object', properties: {} }, annotations: { destructiveHint: false, readOnlyHint: false } },
      ],
    });
  });
  after(async () => {
    await app.close();
    await rm(home, { recursive: true, force: true });
  });

  it('generates, stores and serves the document with provenance, status and diff', async () => {
    const generated = await call('POST', '/api/v1/plugins/kit/intelligence/generate', admin, {});
    assert.equal(generated.status, 201, JSON.stringify(generated.body));
    assert.equal(generated.body.toolCount, 2);
    assert.ok(generated.body.warnings.some((warning: string) => /no code folder/.test(warning)));
    const stored = await call('GET', '/api/v1/plugins/kit/intelligence/generated', admin);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.provenance['tools.convert_currency.description'], 'mcp');
    assert.deepEqual(stored.body.document.tools.find((tool: { name: string }) => tool.name === 'book_flight').sideEffects, [{ type: 'writes', description: 'changes state' }]);
    const status = await call('GET', '/api/v1/plugins/kit/intelligence/generated/status', admin);
    assert.deepEqual([status.body.generated, status.body.stale], [true, false]);
    const diff = await call('GET', '/api/v1/plugins/kit/intelligence/generated/diff', admin);
    assert.equal(diff.body.against, 'none');
    assert.ok(diff.body.changes.some((change: { path: string; source: string }) => change.path === 'tools.convert_currency.retrySafe' && change.source === 'mcp'));
  });

  it('refuses a read key, answers 404 for an unknown plugin and 400 for an unknown source', async () => {
    assert.equal((await call('POST', '/api/v1/plugins/kit/intelligence/generate', reader, {})).status, 403);
    assert.equal((await call('GET', '/api/v1/plugins/kit/intelligence/generated', reader)).status, 403);
    assert.equal((await call('GET', '/api/v1/plugins/nope/intelligence/generated', admin)).status, 404);
    const bad = await call('POST', '/api/v1/plugins/kit/intelligence/generate', admin, { from: ['yaml'] });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /unknown source yaml/);
  });
});
