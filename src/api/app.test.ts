import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { createApiKeyService, type ApiKeyService } from '../access/api-keys.ts';
import { createApi } from './app.ts';
import { accessRoutes } from './routes/access.ts';
import { parseHostPort } from '../cli/commands/host-port.ts';

describeEachBackend('HTTP API basics', (backend) => {
  let db: Database;
  let apiKeys: ApiKeyService;
  let admin: string;
  let api: ReturnType<typeof createApi>;

  before(async () => {
    db = await backend.open();
    apiKeys = createApiKeyService({ db });
    admin = (await apiKeys.ensureAdminKey())!;
    api = createApi({ apiKeys, modules: [accessRoutes({ apiKeys })], maxBodyBytes: 1024 });
  });
  after(async () => db.close());

  const call = (path: string, init: RequestInit & { key?: string } = {}) =>
    api.request(path, {
      ...init,
      headers: { ...(init.key ? { authorization: `Bearer ${init.key}` } : {}), ...(init.headers as Record<string, string>) },
    });

  it('creates exactly one admin key, stored only as a hash', async () => {
    assert.match(admin, /^qvr_[A-Za-z0-9_-]{40,}$/);
    assert.equal(await apiKeys.ensureAdminKey(), undefined);
    const { rows } = await db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys');
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]!.key_hash, admin);
    assert.ok(!JSON.stringify(rows).includes(admin));
  });

  it('serves health and OpenAPI without a key, everything else with one', async () => {
    assert.equal((await call('/healthz')).status, 200);
    const doc = (await (await call('/openapi.json')).json()) as { openapi: string; paths: Record<string, unknown> };
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.paths['/api/v1/keys']);
    const missing = await call('/api/v1/keys');
    assert.equal(missing.status, 401);
    assert.deepEqual(Object.keys(((await missing.json()) as { error: object }).error).sort(), ['code', 'message']);
    assert.equal((await call('/api/v1/keys', { key: 'qvr_wrong' })).status, 401);
    assert.equal((await call('/api/v1/keys', { key: admin })).status, 200);
  });

  it('enforces scopes and revocation', async () => {
    const created = await call('/api/v1/keys', {
      method: 'POST',
      key: admin,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'reader', scopes: ['read'], orgId: 'acme' }),
    });
    assert.equal(created.status, 201);
    const { key, record } = (await created.json()) as { key: string; record: { id: string; orgId: string } };
    assert.equal(record.orgId, 'acme');
    const forbidden = await call('/api/v1/keys', { key });
    assert.equal(forbidden.status, 403);
    assert.equal(((await forbidden.json()) as { error: { code: string } }).error.code, 'forbidden');
    const whoami = (await (await call('/api/v1/whoami', { key })).json()) as { principal: { orgId: string } };
    assert.equal(whoami.principal.orgId, 'acme');
    assert.equal((await call(`/api/v1/keys/${record.id}`, { method: 'DELETE', key: admin })).status, 204);
    assert.equal((await call('/api/v1/whoami', { key })).status, 401);
  });

  it('rejects malformed JSON, schema violations, wrong content type and oversized bodies with 4xx and writes nothing', async () => {
    const before = (await db.query<{ n: number }>('SELECT count(*) AS n FROM api_keys')).rows[0]!.n;
    const post = (body: string, contentType = 'application/json') =>
      call('/api/v1/keys', { method: 'POST', key: admin, headers: { 'content-type': contentType }, body });
    const malformed = await post('{"name": ');
    assert.equal(malformed.status, 400);
    assert.equal(((await malformed.json()) as { error: { code: string } }).error.code, 'invalid_input');
    const invalid = await post(JSON.stringify({ name: '', scopes: ['root'] }));
    assert.equal(invalid.status, 400);
    const details = ((await invalid.json()) as { error: { details: { issues: Array<{ path: string }> } } }).error.details;
    assert.deepEqual(details.issues.map((i) => i.path).sort(), ['name', 'scopes.0']);
    assert.equal((await post('name=x', 'application/x-www-form-urlencoded')).status, 400);
    const big = await post(JSON.stringify({ name: 'x'.repeat(5000), scopes: ['read'] }));
    assert.equal(big.status, 413);
    assert.equal(((await big.json()) as { error: { code: string } }).error.code, 'payload_too_large');
    assert.equal((await call('/api/v1/keys/not-a-uuid', { method: 'DELETE', key: admin })).status >= 400, true);
    const after = (await db.query<{ n: number }>('SELECT count(*) AS n FROM api_keys')).rows[0]!.n;
    assert.equal(after, before);
  });

  it('answers unknown routes with a JSON 404', async () => {
    const response = await call('/nope', { key: admin });
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'not_found');
  });
});

describe('--http parsing', () => {
  it('accepts HOST:PORT, PORT and [v6]:PORT and rejects garbage', () => {
    const fallback = { host: '127.0.0.1', port: 7411 };
    assert.deepEqual(parseHostPort('0.0.0.0:80', fallback), { host: '0.0.0.0', port: 80 });
    assert.deepEqual(parseHostPort('9000', fallback), { host: '127.0.0.1', port: 9000 });
    assert.deepEqual(parseHostPort('[::1]:9000', fallback), { host: '::1', port: 9000 });
    assert.deepEqual(parseHostPort(undefined, fallback), fallback);
    assert.throws(() => parseHostPort('host:port', fallback), /HOST:PORT/);
    assert.throws(() => parseHostPort('70000', fallback), /out of range/);
  });
});

describe('the OpenAPI document', () => {
  it('is built on the first request for it, not when the API is created (issue #28), and once', async () => {
    let reads = 0;
    const operation = { summary: 'counted' };
    const fragment = {
      '/counted': {
        get get() {
          reads++;
          return operation;
        },
      },
    };
    const api = createApi({ apiKeys: { authenticate: () => Promise.reject(new Error('no keys here')) }, modules: [{ register() {}, openapi: fragment }] });
    assert.equal(reads, 0, 'the document was built when the API was created');
    const first = (await (await api.request('/openapi.json')).json()) as { paths: Record<string, { get?: { summary: string } }> };
    assert.equal(first.paths['/counted']?.get?.summary, 'counted');
    await api.request('/openapi.json');
    assert.equal(reads, 1);
  });

  it('sets x-request-id on a route\'s own response without copying it (issue #28: a copy turns the answer into a web stream)', async () => {
    const whole = new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } });
    const frozen = Response.redirect('http://127.0.0.1/elsewhere', 302);
    const raw = createApi({
      apiKeys: { authenticate: () => Promise.reject(new Error('no keys here')) },
      modules: [
        {
          register: (app) => {
            app.get('/whole', () => whole);
            app.get('/frozen', () => frozen);
          },
          openapi: {},
          publicPaths: ['/whole', '/frozen'],
        },
      ],
    });
    const answered = await raw.request('/whole', { headers: { 'x-request-id': 'req-1' } });
    assert.equal(answered, whole, 'the response the route returned');
    assert.equal(answered.headers.get('x-request-id'), 'req-1');
    assert.deepEqual(await answered.json(), { ok: true });
    // Immutable headers (a redirect's): Hono's copy still carries the id.
    const copied = await raw.request('/frozen', { headers: { 'x-request-id': 'req-2' } });
    assert.notEqual(copied, frozen);
    assert.equal(copied.headers.get('x-request-id'), 'req-2');
  });
});
