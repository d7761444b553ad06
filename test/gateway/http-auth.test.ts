/**
 * Issue #12: every 401 says how to authenticate (RFC 6750 `WWW-Authenticate: Bearer`, with
 * `error="invalid_token"` only when a key was sent), and on `/mcp` the body is a JSON-RPC
 * error (code -32000, id null, as the SDK's Streamable HTTP transport answers HTTP-level
 * refusals). On the real app with the production gateway backend, both databases.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { mountMcpApi, type AppMcpApi } from './app-mcp-api.ts';

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describeEachBackend('401 answers: WWW-Authenticate and JSON-RPC bodies', (backend) => {
  let app: App;
  let home: string;
  let api: AppMcpApi['api'];
  let key: string;
  let close: () => Promise<void>;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-401-'));
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db: await backend.open() });
    ({ api, key, close } = await mountMcpApi(app));
  });
  after(async () => {
    await close();
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('/mcp without a key: 401, a Bearer challenge without an error code, a JSON-RPC error', async () => {
    const response = await api.request('http://127.0.0.1/mcp', { method: 'POST', headers: mcpHeaders, body: initialize });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="quiver"');
    const body = (await response.json()) as { jsonrpc: string; error: { code: number; message: string }; id: null };
    assert.deepEqual({ ...body, error: { ...body.error, message: typeof body.error.message } }, { jsonrpc: '2.0', error: { code: -32000, message: 'string' }, id: null });
    assert.match(body.error.message, /missing API key/);
  });

  it('/mcp with a bad key: 401 with error="invalid_token"; the right key initializes', async () => {
    const response = await api.request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...mcpHeaders, authorization: 'Bearer qk_not_a_real_key' }, body: initialize });
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="quiver", error="invalid_token", error_description="invalid or revoked API key"$/);
    const body = (await response.json()) as { error: { code: number }; id: null };
    assert.equal(body.error.code, -32000);
    const good = await api.request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...mcpHeaders, authorization: `Bearer ${key}` }, body: initialize });
    assert.equal(good.status, 200);
    assert.equal(good.headers.get('www-authenticate'), null);
  });

  it('the REST API: 401 carries the challenge too, with its own error body', async () => {
    const missing = await api.request('http://127.0.0.1/api/v1/keys');
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="quiver"');
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'unauthorized');
    const bad = await api.request('http://127.0.0.1/api/v1/keys', { headers: { 'x-api-key': 'qk_wrong' } });
    assert.equal(bad.status, 401);
    assert.match(bad.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const forbidden = await api.request('http://127.0.0.1/api/v1/keys', { headers: { authorization: `Bearer ${key}` } });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.headers.get('www-authenticate'), null, 'a 403 (missing scope) is no authentication challenge');
  });
});
