/**
 * Issue #27: the built-in authorization server of `quiver serve` on loopback, with no external
 * identity provider. An admin invites users over the REST API (the one-time sign-up link is
 * opened in headless Chromium, a password set there); a real MCP SDK client of each line (1.x on
 * the 2025-11-25 session era, v2 pinned to 2026-07-28) starts from Quiver's 401 alone:
 * protected resource metadata → Quiver's own authorization server metadata → Dynamic
 * Client Registration → authorization code + PKCE, Quiver's sign-in and consent pages driven
 * in Chromium, state and `iss` (RFC 9207) checked at the loopback callback → `search_tools` and
 * a tool; a client identified by a Client ID Metadata Document (on loopback https, under the
 * test-only setting) the same without registering. Then: a refresh rotates the refresh token (the old one is refused after), wrong
 * passwords are throttled (the right one is refused too past the limit), a form without its
 * CSRF token is refused, and tokens for another audience, expired, of another organisation or
 * of a disabled account are refused with the spec's errors. Both backends.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpsServer } from 'node:https';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SignJWT, importJWK } from 'jose';
import type { BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport, UnauthorizedError as ModernUnauthorizedError } from '@modelcontextprotocol/client';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { loadSigningKeys } from '../../src/access/authorization-server/signing-keys.ts';
import { lastIssuer } from '../../src/access/authorization-server/issuer-record.ts';
import { createSecretBox, loadSecretKey } from '../../src/plugins/secret-box.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { browserSkip, closeBrowserTest, openBrowserPage } from '../helpers/browser.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { createTwinPluginFolder } from '../e2e/fixtures/twin-server.ts';
import { TestOAuthClient, postInitialize, searchAndCall, startCallbackServer } from '../helpers/mcp-oauth-client.ts';

/**
 * A Client ID Metadata Document server on loopback https (a self-signed certificate made with
 * openssl): the document names its own URL as client_id. Quiver fetches it only under the
 * test-only setting that lets the provider reach loopback addresses.
 */
async function startMetadataDocumentServer(folder: string, redirect: string): Promise<{ url: string; fetched: number; close(): Promise<void> }> {
  const key = join(folder, 'cimd-key.pem');
  const cert = join(folder, 'cimd-cert.pem');
  await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1']);
  const state = { url: '', fetched: 0 };
  const server = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) }, (request, response) => {
    if (request.url !== '/clients/quiver-test.json') return void response.writeHead(404).end();
    state.fetched++;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ client_id: state.url, client_name: 'quiver metadata-document test', redirect_uris: [redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', application_type: 'native' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/clients/quiver-test.json`;
  return {
    get url() {
      return state.url;
    },
    get fetched() {
      return state.fetched;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The registration fields of this file's clients: a desktop/CLI client (RFC 8252 loopback redirect) with markup in its name. */
const BUILT_IN_CLIENT = { client_name: 'quiver <b>built-in</b> test', application_type: 'native' } as const;

/** A client identified by its metadata document's URL (SEP-991): the SDK uses it when the server supports it. */
class MetadataDocumentClient extends TestOAuthClient {
  constructor(
    redirect: string,
    readonly clientMetadataUrl: string,
  ) {
    super(redirect, BUILT_IN_CLIENT);
  }
}

const PASSWORDS: Record<string, string> = { 'alice@acme.test': 'correct horse battery staple', 'carol@acme.test': 'carol has a long password' };

/** Opens the authorization URL and goes through Quiver's sign-in and consent pages; the callback's query. */
async function authorizeInBrowser(page: Page, url: URL, email: string, callback: Promise<URLSearchParams>, clientName = 'quiver <b>built-in</b> test'): Promise<URLSearchParams> {
  let arrived: URLSearchParams | undefined;
  void callback.then((params) => (arrived = params));
  await page.goto(url.href);
  for (let step = 0; step < 6 && arrived === undefined; step++) {
    const form = page.locator('input[name="email"]');
    const consent = page.getByRole('button', { name: 'Allow' });
    await Promise.race([form.waitFor(), consent.waitFor(), callback]);
    if (arrived !== undefined) break;
    if (await form.count()) {
      await form.fill(email);
      await page.locator('input[name="password"]').fill(PASSWORDS[email]!);
      await page.getByRole('button', { name: 'Sign in' }).click();
    } else {
      // The client's name is shown escaped, never as markup.
      assert.equal(await page.locator('h1').innerText(), `Allow ${clientName}?`);
      await consent.click();
    }
    await page.waitForLoadState();
  }
  return callback;
}

describeEachBackend('the built-in authorization server (issue #27)', (backend) => {
  let home: string;
  let app: App;
  let server: HttpServer;
  let mcpUrl: URL;
  let callbacks: Awaited<ReturnType<typeof startCallbackServer>>;
  let documents: Awaited<ReturnType<typeof startMetadataDocumentServer>> | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  let admin: Record<string, string>;
  /** The SDK 1.x client's registration and tokens, for the refresh case. */
  let v1: TestOAuthClient | undefined;

  const api = (path: string, init: RequestInit = {}) => fetch(new URL(path, server.url), { ...init, headers: { ...admin, 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) } });

  async function invite(email: string, body: Record<string, unknown>): Promise<string> {
    const response = await api('/api/v1/users', { method: 'POST', body: JSON.stringify({ email, ...body }) });
    assert.equal(response.status, 201, await response.clone().text());
    return ((await response.json()) as { signupUrl: string }).signupUrl;
  }

  async function signUp(url: string, password: string): Promise<void> {
    await page.goto(url);
    await page.locator('input[name="password"]').fill(password);
    await page.locator('input[name="confirm"]').fill(password);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Password set').waitFor();
  }

  before(async () => {
    if (browserSkip) return;
    home = await openTempDir('builtin-as');
    callbacks = await startCallbackServer();
    documents = await startMetadataDocumentServer(home, callbacks.url);
    // Test-only: the metadata document server is on loopback, which the provider refuses otherwise.
    const env = { QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', QUIVER_AUTH_TEST_PRIVATE_CLIENT_METADATA: '1' };
    app = await createApp(loadConfig(env), { db: await backend.open() });
    await createTwinPluginFolder(home, 'alpha');
    await app.plugins.add(join(home, 'alpha'), { name: 'alpha' });
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    assert.ok(server.adminKey);
    admin = { authorization: `Bearer ${server.adminKey}` };
    mcpUrl = new URL('/mcp', server.url);
    ({ context, page } = await openBrowserPage(home));
  });

  after(async () => {
    if (browserSkip) return;
    await closeBrowserTest({ context, server, app });
    await callbacks?.close();
    await documents?.close();
    await closeBrowserTest({ folder: home });
  });

  it('an admin invites users; each sets a password through the one-time link, which works once', { skip: browserSkip, timeout: 120_000 }, async () => {
    const alice = await invite('Alice@acme.test', { orgId: 'acme', roles: ['dev'], scopes: ['mcp', 'read'] });
    assert.match(alice, new RegExp(`^${server.url}/oauth/signup\\?token=[A-Za-z0-9_-]{43}$`));
    await signUp(alice, PASSWORDS['alice@acme.test']!);
    await page.goto(alice);
    await page.getByText('Link not valid').waitFor();
    await signUp(await invite('carol@acme.test', { orgId: 'acme' }), PASSWORDS['carol@acme.test']!);
    const listed = (await (await api('/api/v1/users')).json()) as { users: Array<{ email: string; status: string; orgId: string; roles: string[]; scopes: string[] }> };
    assert.deepEqual(
      listed.users.map((u) => [u.email, u.status, u.orgId, u.roles, u.scopes]),
      [
        ['alice@acme.test', 'active', 'acme', ['dev'], ['mcp', 'read']],
        ['carol@acme.test', 'active', 'acme', [], ['mcp']],
      ],
    );
    // Administration stays with API keys: a user cannot hold `admin`, and only admins list users.
    assert.equal((await api('/api/v1/users', { method: 'POST', body: JSON.stringify({ email: 'eve@acme.test', orgId: 'acme', scopes: ['admin'] }) })).status, 400);
  });

  it('publishes its metadata: the protected resource names Quiver itself as authorization server', { skip: browserSkip }, async () => {
    const resource = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', server.url))).json()) as Record<string, unknown>;
    assert.deepEqual(resource.authorization_servers, [server.url]);
    // Remembered for `quiver user invite`, whose links name where the server runs.
    assert.equal(await lastIssuer(app.db), server.url);
    assert.equal(resource.resource, mcpUrl.href);
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetch(new URL(path, server.url))).json()) as Record<string, unknown>;
      assert.equal(metadata.issuer, server.url, path);
      assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(metadata.response_types_supported, ['code']);
      assert.equal(metadata.authorization_response_iss_parameter_supported, true);
      assert.equal(metadata.client_id_metadata_document_supported, true);
      assert.equal(typeof metadata.registration_endpoint, 'string');
    }
  });

  it('an SDK 1.x client: discovery from the 401, registration, code + PKCE in Chromium, then search_tools and a tool', { skip: browserSkip, timeout: 180_000 }, async () => {
    const oauth = new TestOAuthClient(callbacks.url, BUILT_IN_CLIENT);
    const first = new Client({ name: 'oauth-v1', version: '1.0.0' });
    await assert.rejects(first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth })), UnauthorizedError);
    assert.ok(oauth.client?.client_id, 'the client registered itself (DCR)');
    const authorizationUrl = oauth.authorizationUrl!;
    assert.equal(authorizationUrl.origin, server.url);
    assert.equal(authorizationUrl.searchParams.get('resource'), mcpUrl.href, 'the resource indicator names Quiver');
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    const params = await authorizeInBrowser(page, authorizationUrl, 'alice@acme.test', callbacks.next());
    assert.equal(params.get('state'), oauth.sentState, 'the state came back unchanged');
    assert.equal(params.get('iss'), server.url, 'RFC 9207 iss in the response');
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth });
    await transport.finishAuth(params.get('code')!);
    assert.ok(oauth.saved?.access_token && oauth.saved.refresh_token, 'an access and a refresh token');
    const client = new Client({ name: 'oauth-v1', version: '1.0.0' });
    await client.connect(transport);
    try {
      await searchAndCall(client);
    } finally {
      await client.close();
    }
    // What the token stands for: alice in acme with her role; the scopes her account holds.
    const whoami = await fetch(new URL('/api/v1/whoami', server.url), { headers: { authorization: `Bearer ${oauth.saved.access_token}` } });
    const principal = ((await whoami.json()) as { principal: { orgId: string; userId: string; roles: string[]; scopes: string[] } }).principal;
    assert.deepEqual({ org: principal.orgId, user: principal.userId, roles: principal.roles }, { org: 'acme', user: 'alice@acme.test', roles: ['dev'] });
    assert.ok(principal.scopes.includes('mcp') && !principal.scopes.includes('admin' as never), principal.scopes.join(' '));
    v1 = oauth;
  });

  it('a refresh rotates the refresh token; the old one is refused afterwards', { skip: browserSkip }, async () => {
    assert.ok(v1?.saved?.refresh_token && v1.client, 'the SDK 1.x case obtained tokens');
    const refresh = (token: string) =>
      fetch(new URL('/oauth/token', server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: v1!.client!.client_id, resource: mcpUrl.href }),
      });
    const old = v1.saved.refresh_token;
    const rotated = await refresh(old);
    const body = (await rotated.json()) as { access_token: string; refresh_token: string };
    assert.equal(rotated.status, 200, JSON.stringify(body));
    assert.ok(body.refresh_token && body.refresh_token !== old, 'a new refresh token');
    assert.equal((await postInitialize(mcpUrl, body.access_token)).status, 200, 'the refreshed access token works');
    const reused = await refresh(old);
    assert.equal(reused.status, 400);
    assert.equal(((await reused.json()) as { error: string }).error, 'invalid_grant');
  });

  it('an SDK v2 client pinned to 2026-07-28: the same flow, stateless', { skip: browserSkip, timeout: 180_000 }, async () => {
    const oauth = new TestOAuthClient(callbacks.url, BUILT_IN_CLIENT);
    const options = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
    const first = new ModernClient({ name: 'oauth-v2', version: '1.0.0' }, options);
    await assert.rejects(first.connect(new ModernHttpTransport(mcpUrl, { authProvider: oauth as never })), ModernUnauthorizedError);
    const params = await authorizeInBrowser(page, oauth.authorizationUrl!, 'alice@acme.test', callbacks.next());
    assert.equal(params.get('state'), oauth.sentState);
    const transport = new ModernHttpTransport(mcpUrl, { authProvider: oauth as never });
    await transport.finishAuth(params); // checks iss against the discovered issuer (RFC 9207)
    const client = new ModernClient({ name: 'oauth-v2', version: '1.0.0' }, options);
    await client.connect(transport);
    try {
      await searchAndCall(client);
      assert.equal(transport.sessionId, undefined);
    } finally {
      await client.close();
    }
  });

  it('a client identified by a Client ID Metadata Document (SDK 1.x): no registration, the document fetched from its https URL', { skip: browserSkip, timeout: 180_000 }, async () => {
    const oauth = new MetadataDocumentClient(callbacks.url, documents!.url);
    // The document's server has a self-signed certificate; only this case trusts it.
    const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    try {
      await assert.rejects(new Client({ name: 'oauth-cimd', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth })), UnauthorizedError);
      assert.equal(oauth.client?.client_id, documents!.url, 'the client id is the document URL, no registration');
      const params = await authorizeInBrowser(page, oauth.authorizationUrl!, 'alice@acme.test', callbacks.next(), 'quiver metadata-document test');
      assert.ok(documents!.fetched >= 1, 'Quiver fetched the document');
      assert.equal(params.get('iss'), server.url);
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth });
      await transport.finishAuth(params.get('code')!);
      const client = new Client({ name: 'oauth-cimd', version: '1.0.0' });
      await client.connect(transport);
      try {
        await searchAndCall(client);
      } finally {
        await client.close();
      }
    } finally {
      if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
    }
  });

  it('refuses a sign-in form without its CSRF token, and throttles wrong passwords per account', { skip: browserSkip, timeout: 120_000 }, async () => {
    const oauth = new TestOAuthClient(callbacks.url, BUILT_IN_CLIENT);
    await assert.rejects(new Client({ name: 'oauth-v1', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth })), UnauthorizedError);
    await page.context().clearCookies(); // no signed-in session: the sign-in page comes
    await page.goto(oauth.authorizationUrl!.href);
    await page.locator('input[name="email"]').waitFor();
    const action = new URL(await page.locator('form').getAttribute('action') ?? '', server.url).href;
    // The browser's own cookies, the right password, but no CSRF token: refused.
    const forged = await page.request.post(action, { form: { email: 'carol@acme.test', password: PASSWORDS['carol@acme.test']! }, maxRedirects: 0 });
    assert.equal(forged.status(), 403);
    assert.match(await forged.text(), /CSRF/);
    // Five wrong passwords, then even the right one is refused for a while.
    for (let attempt = 0; attempt < 5; attempt++) {
      await page.locator('input[name="email"]').fill('carol@acme.test');
      await page.locator('input[name="password"]').fill(`wrong ${attempt}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Wrong email or password.').waitFor();
    }
    await page.locator('input[name="email"]').fill('carol@acme.test');
    await page.locator('input[name="password"]').fill(PASSWORDS['carol@acme.test']!);
    const [answer] = await Promise.all([page.waitForResponse((response) => response.url() === action), page.getByRole('button', { name: 'Sign in' }).click()]);
    assert.equal(answer.status(), 429);
    assert.ok(Number(answer.headers()['retry-after']) > 0);
    await page.getByText('Too many failed sign-ins').waitFor();
    // The failures are in the database: a second HTTP front on the same database (a replica, or
    // this one restarted, with an authorization server of its own) refuses carol's right password too.
    const replica = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    try {
      const elsewhere = new TestOAuthClient(callbacks.url, BUILT_IN_CLIENT);
      await assert.rejects(new Client({ name: 'oauth-v1', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(new URL('/mcp', replica.url), { authProvider: elsewhere })), UnauthorizedError);
      assert.equal(elsewhere.authorizationUrl!.origin, replica.url);
      await page.context().clearCookies();
      await page.goto(elsewhere.authorizationUrl!.href);
      await page.locator('input[name="email"]').fill('carol@acme.test');
      await page.locator('input[name="password"]').fill(PASSWORDS['carol@acme.test']!);
      const replicaAction = new URL(await page.locator('form').getAttribute('action') ?? '', replica.url).href;
      const [refused] = await Promise.all([page.waitForResponse((response) => response.url() === replicaAction), page.getByRole('button', { name: 'Sign in' }).click()]);
      assert.equal(refused.status(), 429, 'the other front counts the failures made at the first');
    } finally {
      await replica.close();
    }
    await page.context().clearCookies();
    // Alice (another account, same address) is not locked out by carol's failures.
    const params = await authorizeInBrowser(page, oauth.authorizationUrl!, 'alice@acme.test', callbacks.next());
    assert.ok(params.get('code'));
  });

  it('a user who denies consent sends the client access_denied (with iss), and no token', { skip: browserSkip, timeout: 120_000 }, async () => {
    const oauth = new TestOAuthClient(callbacks.url, BUILT_IN_CLIENT);
    await assert.rejects(new Client({ name: 'oauth-deny', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth })), UnauthorizedError);
    const callback = callbacks.next();
    await page.goto(oauth.authorizationUrl!.href);
    await page.getByRole('button', { name: 'Deny' }).click();
    const params = await callback;
    assert.equal(params.get('error'), 'access_denied');
    assert.equal(params.get('iss'), server.url);
    assert.equal(params.get('state'), oauth.sentState);
    assert.equal(params.get('code'), null);
  });

  it('refuses tokens for another audience, expired, of another organisation, and of a disabled account', { skip: browserSkip }, async () => {
    const keys = await loadSigningKeys(app.db, createSecretBox(loadSecretKey({ homeDir: home }).key));
    const jwk = keys.privateKeys[0]!;
    const key = await importJWK(jwk, 'ES256');
    const now = Math.floor(Date.now() / 1000);
    const users = (await (await api('/api/v1/users')).json()) as { users: Array<{ id: string; email: string }> };
    const alice = users.users.find((u) => u.email === 'alice@acme.test')!;
    const mint = (claims: Record<string, unknown>, audience: string, expiresAt: number) =>
      new SignJWT({ scope: 'mcp', groups: ['dev'], ...claims }).setProtectedHeader({ alg: 'ES256', kid: jwk.kid!, typ: 'at+jwt' }).setIssuer(server.url).setAudience(audience).setSubject(alice.id).setIssuedAt(now - 60).setExpirationTime(expiresAt).sign(key);
    const metadata = `resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', server.url).href}"`;
    const good = await mint({ org: 'acme' }, mcpUrl.href, now + 300);
    assert.equal((await postInitialize(mcpUrl, good)).status, 200, 'a token with the right claims is accepted');
    const cases = [
      { what: 'another audience', token: await mint({ org: 'acme' }, 'http://127.0.0.1:1/mcp', now + 300), status: 401, challenge: /error="invalid_token", error_description="[^"]*audience/ },
      { what: 'expired', token: await mint({ org: 'acme' }, mcpUrl.href, now - 60), status: 401, challenge: /error="invalid_token", error_description="[^"]*expired/ },
      { what: 'another organisation', token: await mint({ org: 'globex' }, mcpUrl.href, now + 300), status: 403, challenge: /organisation 'globex'/ },
    ];
    for (const { what, token, status, challenge } of cases) {
      const response = await postInitialize(mcpUrl, token);
      assert.equal(response.status, status, what);
      const header = response.headers.get('www-authenticate') ?? '';
      assert.ok(header.startsWith(`Bearer realm="quiver", ${metadata}`), `${what}: ${header}`);
      assert.match(header, challenge, what);
    }
    // The account moved to another organisation: its earlier token is refused, not widened into the new one.
    assert.equal((await api(`/api/v1/users/${alice.id}`, { method: 'PATCH', body: JSON.stringify({ orgId: 'globex' }) })).status, 200);
    assert.equal((await postInitialize(mcpUrl, good)).status, 403);
    assert.equal((await api(`/api/v1/users/${alice.id}`, { method: 'PATCH', body: JSON.stringify({ orgId: 'acme' }) })).status, 200);
    assert.equal((await postInitialize(mcpUrl, good)).status, 200);
    // A disabled account's tokens stop working at once.
    assert.equal((await api(`/api/v1/users/${alice.id}/disabled`, { method: 'PUT', body: JSON.stringify({ disabled: true }) })).status, 200);
    const disabled = await postInitialize(mcpUrl, good);
    assert.equal(disabled.status, 401);
    assert.match(disabled.headers.get('www-authenticate') ?? '', /disabled/);
  });

  it('issues tokens only for its own /mcp: another resource indicator is invalid_target', { skip: browserSkip }, async () => {
    assert.ok(v1?.client);
    const url = new URL('/oauth/authorize', server.url);
    url.search = new URLSearchParams({ client_id: v1.client.client_id, redirect_uri: callbacks.url, response_type: 'code', scope: 'mcp', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', resource: 'https://elsewhere.example/mcp', state: 's' }).toString();
    const response = await fetch(url, { redirect: 'manual' });
    const location = new URL(response.headers.get('location') ?? '', server.url);
    assert.equal(location.searchParams.get('error'), 'invalid_target', location.href);
    assert.equal(location.searchParams.get('iss'), server.url);
  });
});
