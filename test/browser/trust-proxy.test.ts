/**
 * QUIVER_TRUST_PROXY (issue #27) with the built-in authorization server of a real App served
 * over HTTP, on PGlite and PostgreSQL. The test's own requests come from 127.0.0.1, playing the
 * proxy. With `QUIVER_TRUST_PROXY=loopback` a failed sign-in (driven in Chromium, the browser
 * sending X-Forwarded-For) is counted against the forwarded client address, and the provider's
 * metadata names its endpoints at the forwarded scheme and host. With a list that does not
 * name the peer (`10.0.0.0/8`), the same headers are ignored: the failure counts against
 * 127.0.0.1 and the endpoints stay at the listening origin.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { sha256Hex } from '../../src/core/hash.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { browserSkip, closeBrowserTest, openBrowserPage } from '../helpers/browser.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { TestOAuthClient, startCallbackServer } from '../helpers/mcp-oauth-client.ts';
import { startProtectedServer } from '../helpers/protected-mcp-server.ts';
import { startOidcProvider } from '../helpers/oidc-provider.ts';

/** A desktop/CLI client (RFC 8252 loopback redirect), as the built-in server's browser test registers. */
const CLIENT = { client_name: 'trust-proxy test', application_type: 'native' } as const;

const FORWARDED = { 'x-forwarded-for': '198.51.100.23, 203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'quiver.example.com' };

describeEachBackend('X-Forwarded-* believed only from QUIVER_TRUST_PROXY (issue #27)', (backend) => {
  let home: string;
  const apps: App[] = [];
  const servers: HttpServer[] = [];
  let callbacks: Awaited<ReturnType<typeof startCallbackServer>>;
  let context: BrowserContext | undefined;
  let page: Page;

  async function serve(trustProxy: string, more: Record<string, string> = {}): Promise<{ app: App; server: HttpServer }> {
    const app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', QUIVER_TRUST_PROXY: trustProxy, ...more }), { db: await backend.open() });
    apps.push(app);
    const server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    servers.push(server);
    return { app, server };
  }

  /** Fails one sign-in through the browser (the browser adds the forwarded headers); the addresses the throttle counted. */
  async function failSignIn(app: App, server: HttpServer): Promise<{ forwarded: number; peer: number }> {
    const oauth = new TestOAuthClient(callbacks.url, CLIENT);
    await assert.rejects(new Client({ name: 'trust-proxy', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url), { authProvider: oauth })), UnauthorizedError);
    await context!.clearCookies();
    await page.setExtraHTTPHeaders({ 'x-forwarded-for': FORWARDED['x-forwarded-for'] });
    await page.goto(oauth.authorizationUrl!.href);
    await page.locator('input[name="email"]').fill('nobody@acme.test');
    await page.locator('input[name="password"]').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Wrong email or password.').waitFor();
    const count = async (address: string) => Number((await app.db.query<{ n: number | string }>('SELECT count(*) AS n FROM auth_login_failures WHERE key_hash = $1', [sha256Hex(`address:${address}`)])).rows[0]!.n);
    return { forwarded: await count('203.0.113.9'), peer: await count('127.0.0.1') };
  }

  const discovery = async (server: HttpServer) =>
    (await (await fetch(new URL('/.well-known/oauth-authorization-server', server.url), { headers: FORWARDED })).json()) as { issuer: string; token_endpoint: string; authorization_endpoint: string };

  before(async () => {
    if (browserSkip) return;
    home = await openTempDir('trust-proxy');
    callbacks = await startCallbackServer();
    ({ context, page } = await openBrowserPage(home));
  });

  after(async () => {
    if (browserSkip) return;
    await context?.close();
    for (const server of servers) await server.close();
    for (const app of apps) await app.close();
    await callbacks?.close();
    await closeBrowserTest({ folder: home });
  });

  it('behind a trusted proxy: the forwarded client is throttled, the endpoints use the forwarded scheme and host', { skip: browserSkip, timeout: 120_000 }, async () => {
    const { app, server } = await serve('loopback');
    assert.deepEqual(await failSignIn(app, server), { forwarded: 1, peer: 0 }, 'the rightmost untrusted X-Forwarded-For hop was counted');
    const metadata = await discovery(server);
    assert.equal(metadata.issuer, server.url, 'the issuer stays what Quiver was told (QUIVER_AUTH_ISSUER, else where it listens)');
    assert.equal(metadata.token_endpoint, 'https://quiver.example.com/oauth/token');
    assert.equal(metadata.authorization_endpoint, 'https://quiver.example.com/oauth/authorize');
  });

  it('a peer that is not a named proxy: the headers are ignored', { skip: browserSkip, timeout: 120_000 }, async () => {
    const { app, server } = await serve('10.0.0.0/8');
    assert.deepEqual(await failSignIn(app, server), { forwarded: 0, peer: 1 }, 'the connection peer was counted');
    const metadata = await discovery(server);
    assert.equal(metadata.token_endpoint, `${server.url}/oauth/token`);
    assert.equal(metadata.authorization_endpoint, `${server.url}/oauth/authorize`);
  });

  it("a remote plugin's OAuth callback is at the forwarded origin only behind a trusted proxy", { skip: browserSkip, timeout: 120_000 }, async () => {
    const resources: string[] = [];
    const provider = await startOidcProvider({ accounts: { alice: {} }, resources: () => resources, refreshTokens: true });
    const remote = await startProtectedServer(provider.issuer);
    resources.push(remote.url);
    try {
      const redirectOf = async (trustProxy: string) => {
        const { app, server } = await serve(trustProxy, { QUIVER_REMOTE_ALLOW_ADDRESSES: 'loopback' });
        await app.plugins.add(remote.url, { name: 'remote' });
        const response = await fetch(new URL('/api/v1/plugins/remote/oauth/connect', server.url), { method: 'POST', headers: { authorization: `Bearer ${server.adminKey!}`, ...FORWARDED } });
        const body = (await response.json()) as { authorizationUrl: string };
        assert.equal(response.status, 200, JSON.stringify(body));
        return { redirect: new URL(body.authorizationUrl).searchParams.get('redirect_uri'), server };
      };
      const trusted = await redirectOf('loopback');
      assert.equal(trusted.redirect, 'https://quiver.example.com/api/v1/oauth/callback');
      const untrusted = await redirectOf('10.0.0.0/8');
      assert.equal(untrusted.redirect, `${untrusted.server.url}/api/v1/oauth/callback`);
    } finally {
      await remote.close();
      await provider.close();
    }
  });
});
