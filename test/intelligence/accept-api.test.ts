/**
 * Accepting and rejecting a generated PID over HTTP (issue #14 follow-up), every backend: an
 * admin accepts the latest generation, which becomes the plugin's current PID with its
 * provenance (generation, hashes, who, when) and not as author-written; status shows the
 * relation; a wrong generation id, a rejected or an already-accepted generation is refused
 * with 409, a read key with 403.
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

describeEachBackend('PID accept/reject API', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let home: string;
  let admin: string;
  let reader: string;
  const call = (method: string, path: string, key: string, body?: unknown) => requestJson(api, method, path, key, body);

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-pid-accept-'));
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db: await backend.open() });
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    reader = (await app.apiKeys.create({ name: 'operator', scopes: ['read'] })).key;
    await app.catalog.syncPlugin({
      pluginId: 'kit',
      version: '1.0.0',
      tools: [{ name: 'convert_currency', description: "Convert an amount between two currencies at today's rate.", parameters: { type: 'object', properties: { amount: { type: 'number' } } }, annotations: { readOnlyHint: true } }],
    });
  });
  after(async () => {
    await app.close();
    await rm(home, { recursive: true, force: true });
  });

  it('accepts the latest generation with provenance, refuses the wrong id, a read key and rejecting the accepted one', async () => {
    assert.equal((await call('POST', '/api/v1/plugins/kit/intelligence/generate', admin, {})).status, 201);
    const generated = await call('GET', '/api/v1/plugins/kit/intelligence/generated', admin);
    assert.equal(generated.body.review, 'candidate');
    const id = generated.body.id as string;
    assert.equal((await call('POST', '/api/v1/plugins/kit/intelligence/generated/accept', reader, {})).status, 403);
    const wrong = await call('POST', '/api/v1/plugins/kit/intelligence/generated/accept', admin, { generationId: '00000000-0000-4000-8000-000000000000' });
    assert.equal(wrong.status, 409, JSON.stringify(wrong.body));
    const accepted = await call('POST', '/api/v1/plugins/kit/intelligence/generated/accept', admin, { generationId: id });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal(accepted.body.generationId, id);
    assert.equal(accepted.body.contentHash, generated.body.contentHash);
    assert.match(accepted.body.acceptedBy, /^key:/);
    const current = await call('GET', '/api/v1/plugins/kit/intelligence', admin);
    assert.equal(current.body.origin, 'generated', 'an accepted document is not author-written');
    assert.deepEqual(current.body.pid, generated.body.document);
    const status = await call('GET', '/api/v1/plugins/kit/intelligence/generated/status', admin);
    assert.deepEqual([status.body.review, status.body.accepted.currentIsAccepted, status.body.accepted.newestIsAccepted], ['accepted', true, true]);
    assert.equal((await call('POST', '/api/v1/plugins/kit/intelligence/generated/reject', admin, {})).status, 409);
    // A new generation is a new candidate: the current document is no longer the newest generation.
    assert.equal((await call('POST', '/api/v1/plugins/kit/intelligence/generate', admin, {})).status, 201);
    const after = await call('GET', '/api/v1/plugins/kit/intelligence/generated/status', admin);
    assert.notEqual(after.body.generationId, id);
    assert.deepEqual([after.body.review, after.body.accepted.currentIsAccepted, after.body.accepted.newestIsAccepted], ['candidate', true, false]);
    const rejected = await call('POST', '/api/v1/plugins/kit/intelligence/generated/reject', admin);
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    assert.equal(rejected.body.review, 'rejected');
    const refused = await call('POST', '/api/v1/plugins/kit/intelligence/generated/accept', admin, {});
    assert.equal(refused.status, 409);
    assert.match(refused.body.error?.message ?? JSON.stringify(refused.body), /rejected/);
    const openapi = await call('GET', '/openapi.json', admin);
    assert.ok(JSON.stringify(openapi.body).includes('/generated/accept'));
  });

  it('keeps the admin-written document as the author source after an acceptance, and refuses a stale generation unless forced', async () => {
    const written = { version: '1.0', pluginId: 'kit', semantic: { capabilities: ['Converts money between currencies, written by the admin'] }, tools: [{ name: 'convert_currency', description: 'Admin words for converting currency.' }] };
    const put = await call('PUT', '/api/v1/plugins/kit/intelligence', admin, written);
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal((await call('POST', '/api/v1/plugins/kit/intelligence/generate', admin, {})).status, 201);
    assert.equal((await call('POST', '/api/v1/plugins/kit/intelligence/generated/accept', admin)).status, 200);
    // The current document is now the accepted (generated) one; the next generation still reads the admin's words as its author source.
    assert.equal((await call('POST', '/api/v1/plugins/kit/intelligence/generate', admin, {})).status, 201);
    const next = await call('GET', '/api/v1/plugins/kit/intelligence/generated', admin);
    assert.equal(next.body.provenance['tools.convert_currency.description'], 'author', JSON.stringify(next.body.provenance));
    assert.deepEqual(next.body.document.semantic.capabilities, written.semantic.capabilities);
    // Discovery changes: the stored generation is stale and is refused unless forced.
    await app.catalog.syncPlugin({
      pluginId: 'kit',
      version: '1.0.1',
      tools: [{ name: 'convert_currency', description: 'Convert an amount between two currencies at the live rate.', parameters: { type: 'object', properties: { amount: { type: 'number' } } }, annotations: { readOnlyHint: true } }],
    });
    const status = await call('GET', '/api/v1/plugins/kit/intelligence/generated/status', admin);
    assert.deepEqual([status.body.stale, status.body.staleSources], [true, ['mcp']]);
    const stale = await call('POST', '/api/v1/plugins/kit/intelligence/generated/accept', admin, {});
    assert.equal(stale.status, 409);
    assert.match(JSON.stringify(stale.body), /stale \(changed: mcp\).*--force/);
    const forced = await call('POST', '/api/v1/plugins/kit/intelligence/generated/accept', admin, { force: true });
    assert.equal(forced.status, 200, JSON.stringify(forced.body));
    assert.deepEqual([forced.body.forced, forced.body.staleSources], [true, ['mcp']]);
  });
});
