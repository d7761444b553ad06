import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve as serveHttp } from '@hono/node-server';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { Database } from '../../store/database.ts';
import { createApiKeyService } from '../../access/api-keys.ts';
import { createApi } from '../app.ts';
import { accessRoutes } from './access.ts';
import { uiRoutes, UI_CONTENT_SECURITY_POLICY } from './ui.ts';

describeEachBackend('admin UI routes', (backend) => {
  let db: Database;
  let api: ReturnType<typeof createApi>;
  let admin: string;

  before(async () => {
    db = await backend.open();
    const apiKeys = createApiKeyService({ db });
    admin = (await apiKeys.ensureAdminKey())!;
    api = createApi({ apiKeys, modules: [accessRoutes({ apiKeys }), uiRoutes()] });
  });
  after(async () => db.close());

  it('serves the page at /ui and /ui/ without a key, with a strict CSP and no caching surprises', async () => {
    for (const path of ['/ui', '/ui/', '/ui/index.html', '/ui/.']) {
      const response = await api.request(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.equal(csp, UI_CONTENT_SECURITY_POLICY);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(response.headers.get('cache-control'), 'no-cache');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      const html = await response.text();
      assert.match(html, /<title>Quiver admin<\/title>/);
      assert.match(html, /<script type="module" src="\/ui\/app\.js"><\/script>/);
      // No inline script anywhere: every <script> has a src.
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/);
    }
  });

  it('serves each asset with its content type, and answers 304 to a matching ETag', async () => {
    const expected: Record<string, string> = {
      '/ui/app.js': 'text/javascript; charset=utf-8',
      '/ui/styles.css': 'text/css; charset=utf-8',
      '/ui/favicon.svg': 'image/svg+xml',
    };
    for (const [path, type] of Object.entries(expected)) {
      const response = await api.request(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), type, path);
      assert.ok(response.headers.get('content-security-policy'), path);
      const etag = response.headers.get('etag');
      assert.match(etag ?? '', /^"[A-Za-z0-9_-]+"$/);
      const body = await response.text();
      const onDisk = readFileSync(new URL(`../../web/${path.slice('/ui/'.length)}`, import.meta.url), 'utf8');
      assert.equal(body, onDisk, path);
      const again = await api.request(path, { headers: { 'if-none-match': etag! } });
      assert.equal(again.status, 304, path);
      assert.equal(await again.text(), '');
    }
  });

  it('never builds the page with innerHTML and never stores the key outside sessionStorage', async () => {
    const script = await (await api.request('/ui/app.js')).text();
    assert.doesNotMatch(script, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    assert.doesNotMatch(script, /localStorage|document\.cookie/);
    assert.match(script, /sessionStorage\.setItem\(KEY_STORAGE/);
  });

  it('refuses traversal, encoded traversal, unknown files and folders with 404, and a NUL byte with 400', async () => {
    const attempts = [
      '/ui/../package.json',
      '/ui/..%2fpackage.json',
      '/ui/..%2Fpackage.json',
      '/ui/%2e%2e/package.json',
      '/ui/%2e%2e%2fpackage.json',
      '/ui/%2E%2E%2F%2E%2E%2Fpackage.json',
      '/ui/..%5cpackage.json',
      '/ui/....//package.json',
      '/ui//etc/passwd',
      '/ui/%2fetc%2fpasswd',
      '/ui/app.js/',
      '/ui/web/app.js',
      '/ui/APP.JS',
      '/ui/unknown.js',
      '/ui/ui.ts',
    ];
    // Sent with a valid key: a path that normalises out of /ui (`/ui/../x` is `/x` to any URL
    // parser) must still find nothing, not merely be refused for want of a key.
    for (const path of attempts) {
      const response = await api.request(path, { headers: { authorization: `Bearer ${admin}` } });
      assert.equal(response.status, 404, path);
      const body = await response.text();
      assert.doesNotMatch(body, /"name":\s*"quiver"|root:/, path);
      assert.equal((JSON.parse(body) as { error: { code: string } }).error.code, 'not_found', path);
    }
    // A NUL byte is refused before any route, for every path (api/http.ts, issue #18 finding 7).
    const nul = await api.request('/ui/app.js%00.html', { headers: { authorization: `Bearer ${admin}` } });
    assert.equal(nul.status, 400);
    assert.equal((JSON.parse(await nul.text()) as { error: { code: string } }).error.code, 'invalid_input');
  });

  it('refuses raw, un-normalised traversal sent over a real socket', async () => {
    const server = serveHttp({ fetch: api.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const { port } = server.address() as AddressInfo;
    try {
      const raw = (path: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const request = httpRequest({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${admin}` } }, (response) => {
            let body = '';
            response.on('data', (chunk) => (body += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          });
          request.on('error', reject);
          request.end();
        });
      assert.equal((await raw('/ui/app.js')).status, 200);
      for (const path of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/..%2f..%2fpackage.json', '/ui/..\\package.json', '/ui/../../../../etc/passwd']) {
        const { status, body } = await raw(path);
        assert.ok(status === 404 || status === 400, `${path}: ${status}`);
        assert.doesNotMatch(body, /"name":\s*"quiver"|root:/, path);
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('leaves the API behind its key: /ui being public opens nothing else', async () => {
    assert.equal((await api.request('/api/v1/whoami')).status, 401);
    assert.equal((await api.request('/api/v1/whoami', { headers: { authorization: `Bearer ${admin}` } })).status, 200);
  });
});

it('reads files relative to a given web root (as a dist/ build does) and only the known ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quiver-ui-'));
  try {
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>built</title>');
    writeFileSync(join(dir, 'secret.txt'), 'nope');
    const module = uiRoutes({ webRoot: pathToFileURL(`${dir}/`) });
    const { Hono } = await import('hono');
    const app = new Hono();
    module.register(app as never);
    const page = await app.request('/ui');
    assert.equal(page.status, 200);
    assert.equal(await page.text(), '<!doctype html><title>built</title>');
    assert.equal((await app.request('/ui/secret.txt')).status, 404);
    // A known name whose file is missing from the build is a 404 too, not a 500.
    assert.equal((await app.request('/ui/app.js')).status, 404);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
