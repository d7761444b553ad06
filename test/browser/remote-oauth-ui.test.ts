/**
 * Issue #27: the admin UI connects a remote plugin that requires OAuth, in Debian's Chromium.
 * The plugin is a real MCP server on loopback that accepts only a real OpenID provider's
 * (`oidc-provider`) tokens for its own URL; Quiver is a real App served over HTTP. Installed
 * while it answers 401, the plugin shows "needs authorization" and Connect; Connect runs
 * authorization code + PKCE in the same tab (the provider's login and consent pages), back
 * through Quiver's callback to the Plugins tab, which then says connected, as whom and until
 * when; the waiting plugin's tools were discovered and its calls carry the token. A forged
 * callback and a callback reaching a browser that did not press Connect (no ticket cookie) are
 * refused and shown. Disconnect revokes the grant at the provider. On a per-user server a
 * non-admin user connects themselves (their own account at the provider). Both backends.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { createSecretBox, loadSecretKey } from '../../src/plugins/secret-box.ts';
import { findRemoteOAuth } from '../../src/store/repositories/remote-oauth.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { startProtectedServer } from '../helpers/protected-mcp-server.ts';
import { browserSkip, closeBrowserTest, openBrowserPage, signIn } from '../helpers/browser.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { openTempDir } from '../plugins/helpers.ts';

/** The provider's development pages ask for web fonts the closed network cannot resolve; Quiver's own pages load nothing from elsewhere. */
const PROVIDER_NOISE = /ERR_NAME_NOT_RESOLVED|status of (404|503)/;

/** Walks the provider's login and consent pages as `login` until the browser is back in Quiver's UI. */
async function signInAtProvider(page: Page, quiver: string, login: string): Promise<void> {
  for (let step = 0; step < 8; step++) {
    if (page.url().startsWith(`${quiver}/ui`)) return;
    const form = page.locator('input[name="login"]');
    const consent = page.getByRole('button', { name: 'Continue' });
    const back = page.locator('#view');
    await Promise.race([form.waitFor(), consent.waitFor(), back.waitFor()]).catch(async (error: Error) => {
      throw new Error(`${error.message}\nat ${page.url()}:\n${(await page.locator('body').innerText().catch(() => '')).slice(0, 800)}`);
    });
    if (page.url().startsWith(`${quiver}/ui`)) return;
    if (await form.count()) {
      await form.fill(login);
      await page.locator('input[name="password"]').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
    } else if (await consent.count()) {
      await consent.click();
    }
    await page.waitForLoadState();
  }
  assert.fail(`never came back to Quiver's UI (at ${page.url()})`);
}

describeEachBackend('admin UI: Connect and Disconnect a remote plugin behind OAuth (issue #27)', (backend) => {
  let home: string;
  let provider: TestOidcProvider;
  let remote: Awaited<ReturnType<typeof startProtectedServer>>;
  let app: App;
  let server: HttpServer;
  let context: BrowserContext | undefined;
  let page: Page;
  let consoleErrors: string[] = [];
  const resources: string[] = [];

  before(async () => {
    if (browserSkip) return;
    home = await openTempDir('remote-oauth-ui');
    provider = await startOidcProvider({ accounts: { alice: {}, bob: {} }, resources: () => resources, refreshTokens: true });
    remote = await startProtectedServer(provider.issuer);
    resources.push(remote.url);
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES: 'loopback' }), { db: await backend.open() });
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    ({ context, page, consoleErrors } = await openBrowserPage(home, { ignore: PROVIDER_NOISE }));
  });

  after(async () => {
    if (browserSkip) return;
    await closeBrowserTest({ context, server, app });
    await remote?.close();
    await provider?.close();
    await closeBrowserTest({ folder: home });
  });

  /** The hub's stored state, opened with the hub's key. */
  async function storedHubState(): Promise<{ tokens?: { refresh_token?: string }; client?: { client_id?: string } } | undefined> {
    const sealed = await findRemoteOAuth(app.db, remote.url);
    if (!sealed) return undefined;
    return JSON.parse(createSecretBox(loadSecretKey({ homeDir: home }).key).open(sealed, `quiver/remote-oauth/${remote.url}`)) as never;
  }

  const row = () => page.locator('tr', { has: page.locator('[data-oauth="remote"]') });

  it('installs as needing authorization, connects through the browser flow, shows owner and expiry, and calls with the token', { skip: browserSkip, timeout: 240_000 }, async () => {
    const report = await app.plugins.add(remote.url, { name: 'remote' });
    assert.equal(report.plugin.source['needsAuthorization'], true);

    await signIn(page, server.url, server.adminKey!);
    await page.getByRole('tab', { name: 'Plugins' }).click();
    const cell = page.locator('[data-oauth="remote"]');
    await cell.getByText('needs authorization').waitFor();
    assert.match((await cell.textContent()) ?? '', new RegExp(`or run: quiver plugin authorize ${remote.url.replace(/[.]/g, '\\.')}`));

    const authorizationRequests: URL[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin === provider.issuer && url.pathname === '/auth') authorizationRequests.push(url);
    });
    await cell.getByRole('button', { name: 'Connect' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await signInAtProvider(page, server.url, 'alice');
    assert.equal(authorizationRequests[0]?.searchParams.get('redirect_uri'), `${server.url}/api/v1/oauth/callback`);
    assert.equal(authorizationRequests[0]?.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorizationRequests[0]?.searchParams.get('resource'), remote.url);

    await page.getByText('Connected remote').waitFor();
    assert.equal(new URL(page.url()).search, '', 'the outcome is shown once: the query is dropped');
    await cell.getByText('connected').waitFor();
    const text = (await cell.textContent()) ?? '';
    assert.match(text, /as the hub's \(every caller\)/);
    assert.match(text, /token expires .*\(refreshed before expiry\)/);
    assert.ok(!/access_token|refresh_token|eyJ/.test(await page.content()), 'no token reaches the page');

    // The plugin waited for this authorization: its tools were discovered, and calls carry the token.
    const details = await app.plugins.show('remote');
    assert.equal(details.plugin.source['needsAuthorization'], undefined);
    assert.equal(details.toolCount, 1);
    const result = await app.supervisor.callTool(await app.plugins.upstreamSpec('remote'), 'whoami', {});
    assert.deepEqual(result.content, [{ type: 'text', text: 'user alice' }]);
    await row().getByRole('cell', { name: '1', exact: true }).waitFor();
    assert.deepEqual(consoleErrors, []);
  });

  it('refuses a forged callback and a callback in a browser that did not press Connect, and shows why', { skip: browserSkip, timeout: 180_000 }, async () => {
    await page.goto(`${server.url}/api/v1/oauth/callback?state=forged&code=stolen`);
    const alert = page.getByRole('alert').filter({ hasText: 'Authorization failed' });
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /this browser did not start that authorization/);

    // Started through the API elsewhere (no ticket cookie in this browser), completed here: refused.
    const started = await fetch(`${server.url}/api/v1/plugins/remote/oauth/connect`, { method: 'POST', headers: { authorization: `Bearer ${server.adminKey}` } });
    assert.equal(started.status, 200);
    assert.match(started.headers.get('set-cookie') ?? '', /^quiver_oauth_[0-9a-f]{24}=[^;]+; Max-Age=600; Path=\/api\/v1\/oauth\/callback; HttpOnly; SameSite=Lax$/);
    const { authorizationUrl } = (await started.json()) as { authorizationUrl: string };
    await page.goto(authorizationUrl);
    await signInAtProvider(page, server.url, 'alice');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /this browser did not start that authorization/);
    // The earlier connection is untouched (the refused callback redeemed nothing).
    assert.equal((await app.remoteOAuth.status(remote.url)).authorized, true);
  });

  it('Disconnect revokes the grant at the provider', { skip: browserSkip, timeout: 120_000 }, async () => {
    const before = await storedHubState();
    assert.ok(before?.tokens?.refresh_token && before.client?.client_id);
    await page.goto(`${server.url}/ui#plugins`);
    const cell = page.locator('[data-oauth="remote"]');
    await cell.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText('remote disconnected (revoked at the server)').waitFor();
    await cell.getByRole('button', { name: 'Connect with OAuth' }).waitFor();
    assert.equal((await app.remoteOAuth.status(remote.url)).authorized, false);
    const refused = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: before.tokens.refresh_token, client_id: before.client.client_id, resource: remote.url }),
    });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_grant');
  });

  it('on a per-user server a user without admin connects themselves, with their own account', { skip: browserSkip, timeout: 240_000 }, async () => {
    await app.remoteOAuth.setOwnerKind(remote.url, 'user');
    const { key } = await app.apiKeys.create({ name: 'bob', scopes: ['read', 'mcp'], userId: 'bob' });
    // A fresh profile: the provider's session of alice must not sign bob in.
    const bob = await openBrowserPage(await openTempDir('remote-oauth-ui-bob'), { ignore: PROVIDER_NOISE });
    try {
      await signIn(bob.page, server.url, key);
      await bob.page.getByRole('tab', { name: 'Plugins' }).click();
      const cell = bob.page.locator('[data-oauth="remote"]');
      await cell.getByText('for user bob').waitFor();
      await cell.getByRole('button', { name: 'Connect' }).click();
      await bob.page.waitForURL((url) => url.origin === provider.issuer);
      await signInAtProvider(bob.page, server.url, 'bob');
      await bob.page.getByText('Connected remote').waitFor();
      await cell.getByText('as user bob').waitFor();
      assert.equal((await app.remoteOAuth.status(remote.url, { kind: 'user', id: 'bob' })).authorized, true);
      assert.equal((await app.remoteOAuth.status(remote.url)).authorized, false, "the hub's stays disconnected");
      // Bob cannot disconnect the hub's or change anything else: the API refuses a hub change for a read key.
      await app.remoteOAuth.setOwnerKind(remote.url, 'hub');
      const refused = await fetch(`${server.url}/api/v1/plugins/remote/oauth`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
      assert.equal(refused.status, 403);
      assert.deepEqual(bob.consoleErrors, []);
    } finally {
      await bob.context.close();
    }
  });
});
