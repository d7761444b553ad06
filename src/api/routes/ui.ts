/**
 * @module api/routes/ui
 * The web admin UI (DESIGN §3.9): a few static files from `src/web/` (or `dist/web/` in a
 * build), served under `/ui` without a key (the page asks for one and calls the API with it).
 * Only the files named in `ASSETS` are served: a request is looked up by exact name, so no
 * path (`..`, encoded slashes, absolute paths) can reach anything else. Every response
 * carries a strict Content-Security-Policy: scripts and styles from this origin only, no
 * inline code, no framing.
 */
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { ErrorCodes } from '../../core/errors.ts';
import type { ApiEnv } from '../http.ts';
import type { ApiRouteModule } from '../app.ts';

/** The files the UI consists of, by name, with their content types. */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['index.html', 'text/html; charset=utf-8'],
  ['app.js', 'text/javascript; charset=utf-8'],
  ['accuracy.js', 'text/javascript; charset=utf-8'],
  ['learning.js', 'text/javascript; charset=utf-8'],
  ['trust.js', 'text/javascript; charset=utf-8'],
  ['pid.js', 'text/javascript; charset=utf-8'],
  ['rollouts.js', 'text/javascript; charset=utf-8'],
  ['oauth.js', 'text/javascript; charset=utf-8'],
  ['users.js', 'text/javascript; charset=utf-8'],
  ['styles.css', 'text/css; charset=utf-8'],
  ['favicon.svg', 'image/svg+xml'],
]);

/** The policy every UI response carries: nothing inline, nothing from elsewhere. */
export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The folder holding the UI files: `web/` beside `api/`, in `src/` and in `dist/` alike. */
const DEFAULT_WEB_ROOT = new URL('../../web/', import.meta.url);

/** Routes serving the admin UI; `webRoot` (a folder URL ending in `/`) is for tests. */
export function uiRoutes(options: { webRoot?: URL } = {}): ApiRouteModule {
  const webRoot = options.webRoot ?? DEFAULT_WEB_ROOT;

  async function serve(c: Context<ApiEnv>, name: string): Promise<Response> {
    const contentType = ASSETS.get(name);
    if (contentType === undefined) {
      return c.json({ error: { code: ErrorCodes.notFound, message: `no UI file '${name.slice(0, 100)}'` } }, 404);
    }
    // Read per request: the files are small, and an edited file shows on the next reload.
    let body: Uint8Array<ArrayBuffer>;
    try {
      body = new Uint8Array(await readFile(new URL(name, webRoot)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return c.json({ error: { code: ErrorCodes.notFound, message: `UI file '${name}' is missing from this installation` } }, 404);
    }
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const headers: Record<string, string> = {
      'content-type': contentType,
      // Revalidate every time (cheap with the ETag), so a new version is never half-cached.
      'cache-control': 'no-cache',
      etag,
      'content-security-policy': UI_CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    };
    if (c.req.header('if-none-match') === etag) return c.body(null, 304, headers);
    return c.body(body, 200, headers);
  }

  return {
    register(app: Hono<ApiEnv>) {
      app.get('/ui', (c) => serve(c, 'index.html'));
      app.get('/ui/', (c) => serve(c, 'index.html'));
      // Whatever the remainder is (decoded or not, with `..` or `/`), only an exact known name matches.
      app.get('/ui/*', (c) => serve(c, c.req.path.slice('/ui/'.length)));
    },
    openapi: {
      '/ui': { get: { summary: 'The web admin UI (HTML; no key needed to load it, the page asks for one)', tags: ['ui'] } },
    },
  };
}
