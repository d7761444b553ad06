/**
 * Issue #27: Quiver as an OAuth protected resource, with a real certified OpenID provider
 * (`oidc-provider`) on loopback as the external authorization server. A real MCP SDK client of
 * each line (1.x on the 2025-11-25 session era, v2 pinned to 2026-07-28) starts from Quiver's
 * 401 alone: `resource_metadata` → protected resource metadata → the provider's metadata →
 * Dynamic Client Registration → authorization code + PKCE, the provider's login and consent
 * pages driven in headless Chromium, the state checked at the loopback callback → then calls
 * `search_tools` and a tool. Tokens the provider's key signed but Quiver must refuse: for another
 * audience (RFC 8707), expired, of an organisation not admitted, without the `mcp` scope; each
 * with the spec's status and challenge. An API key keeps working beside tokens. Both backends.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport, UnauthorizedError as ModernUnauthorizedError } from '@modelcontextprotocol/client';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { browserSkip, closeBrowserTest, openBrowserPage } from '../helpers/browser.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { createTwinPluginFolder } from '../e2e/fixtures/twin-server.ts';
import { TestOAuthClient, postInitialize, searchAndCall, startCallbackServer } from '../helpers/mcp-oauth-client.ts';

const run = promisify(execFile);
const inspector = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/inspector-cli/build/index.js', import.meta.url));
// inspector-cli 1.0.3 looks for its package.json relative to the working directory (as in test/gateway/stdio.test.ts).
const inspectorCwd = dirname(inspector);

/** Opens the authorization URL and goes through the provider's pages as `login`; the callback's query. */
async function authorizeInBrowser(page: Page, url: URL, login: string, callback: Promise<URLSearchParams>): Promise<URLSearchParams> {
  let arrived: URLSearchParams | undefined;
  void callback.then((params) => (arrived = params));
  await page.goto(url.href);
  // A login page (first time), then a consent page per client; the provider decides which come.
  for (let step = 0; step < 6 && arrived === undefined; step++) {
    const form = page.locator('input[name="login"]');
    const consent = page.getByRole('button', { name: 'Continue' });
    await Promise.race([form.waitFor(), consent.waitFor(), callback]);
    if (arrived !== undefined) break;
    if (await form.count()) {
      await form.fill(login);
      await page.locator('input[name="password"]').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
    } else {
      await consent.click();
    }
    await page.waitForLoadState();
  }
  return callback;
}

describeEachBackend('MCP authorization with an external OpenID provider (issue #27)', (backend) => {
  let home: string;
  let provider: TestOidcProvider;
  let app: App;
  let server: HttpServer;
  let mcpUrl: URL;
  let callbacks: Awaited<ReturnType<typeof startCallbackServer>>;
  let context: BrowserContext | undefined;
  let page: Page;
  const resources: string[] = [];
  /** The access token the SDK 1.x client obtained (for the Inspector CLI case). */
  let obtainedToken: string | undefined;

  before(async () => {
    if (browserSkip) return;
    home = await openTempDir('mcp-oauth');
    provider = await startOidcProvider({
      accounts: { alice: { org: 'acme', groups: ['dev', 'wheel'] }, bob: { org: 'globex' } },
      resources: () => resources,
    });
    callbacks = await startCallbackServer();
    const env = {
      QUIVER_HOME: home,
      QUIVER_LOG_LEVEL: 'silent',
      QUIVER_VERIFY_ON_INSTALL: 'off',
      QUIVER_OAUTH_ISSUER: provider.issuer,
      QUIVER_OAUTH_CLOCK_TOLERANCE_SECONDS: '0',
      QUIVER_OAUTH_ORGS: JSON.stringify({ acme: { org: 'acme', scopes: ['mcp', 'read'], roles: ['dev'] } }),
    };
    app = await createApp(loadConfig(env), { db: await backend.open() });
    await createTwinPluginFolder(home, 'alpha');
    await app.plugins.add(join(home, 'alpha'), { name: 'alpha' });
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    mcpUrl = new URL('/mcp', server.url);
    // The provider issues tokens for Quiver's resource identifier: its /mcp URL (RFC 8707).
    resources.push(mcpUrl.href);
    ({ context, page } = await openBrowserPage(home));
  });

  after(async () => {
    if (browserSkip) return;
    await closeBrowserTest({ context, server, app });
    await callbacks?.close();
    await provider?.close();
    await closeBrowserTest({ folder: home });
  });

  it('publishes protected resource metadata without a key, and every 401 names it', { skip: browserSkip }, async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const response = await fetch(new URL(path, server.url));
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
      assert.deepEqual(await response.json(), {
        resource: mcpUrl.href,
        authorization_servers: [provider.issuer],
        scopes_supported: ['mcp'],
        bearer_methods_supported: ['header'],
        resource_name: 'Quiver',
      });
    }
    const refused = await postInitialize(mcpUrl);
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), `Bearer realm="quiver", resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', server.url).href}"`);
  });

  it('an SDK 1.x client: discovery from the 401, registration, code + PKCE in Chromium, then search_tools and a tool', { skip: browserSkip, timeout: 180_000 }, async () => {
    const oauth = new TestOAuthClient(callbacks.url);
    const first = new Client({ name: 'oauth-v1', version: '1.0.0' });
    await assert.rejects(first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth })), UnauthorizedError);
    assert.ok(oauth.client?.client_id, 'the client registered itself (DCR)');
    const authorizationUrl = oauth.authorizationUrl!;
    assert.equal(authorizationUrl.origin, provider.issuer);
    assert.equal(authorizationUrl.searchParams.get('resource'), mcpUrl.href, 'the resource indicator names Quiver');
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    const params = await authorizeInBrowser(page, authorizationUrl, 'alice', callbacks.next());
    assert.equal(params.get('state'), oauth.sentState, 'the state came back unchanged');
    assert.equal(params.get('iss'), provider.issuer, 'RFC 9207 iss in the response');
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth });
    await transport.finishAuth(params.get('code')!);
    assert.ok(oauth.saved?.access_token);
    obtainedToken = oauth.saved.access_token;
    const client = new Client({ name: 'oauth-v1', version: '1.0.0' });
    await client.connect(transport);
    try {
      await searchAndCall(client);
    } finally {
      await client.close();
    }
    // What the token stands for: alice in acme, with only the granted role and scopes.
    const whoami = await fetch(new URL('/api/v1/whoami', server.url), { headers: { authorization: `Bearer ${oauth.saved!.access_token}` } });
    const principal = ((await whoami.json()) as { principal: { orgId: string; userId: string; roles: string[]; scopes: string[] } }).principal;
    assert.deepEqual({ org: principal.orgId, user: principal.userId, roles: principal.roles, scopes: principal.scopes }, { org: 'acme', user: 'alice', roles: ['dev'], scopes: ['mcp'] });
  });

  it('an SDK v2 client pinned to 2026-07-28: the same flow, stateless', { skip: browserSkip, timeout: 180_000 }, async () => {
    const oauth = new TestOAuthClient(callbacks.url);
    const options = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
    const first = new ModernClient({ name: 'oauth-v2', version: '1.0.0' }, options);
    await assert.rejects(first.connect(new ModernHttpTransport(mcpUrl, { authProvider: oauth as never })), ModernUnauthorizedError);
    const params = await authorizeInBrowser(page, oauth.authorizationUrl!, 'alice', callbacks.next());
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

  it('refuses a token for another audience, an expired one, one of another organisation, one without the mcp scope', { skip: browserSkip }, async () => {
    const now = Math.floor(Date.now() / 1000);
    const metadata = `resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', server.url).href}"`;
    const good = { scope: 'mcp', org: 'acme' };
    const cases = [
      { what: 'another audience', token: await provider.mint(good, { audience: 'http://127.0.0.1:1/mcp', subject: 'alice', expiresAt: now + 300 }), status: 401, challenge: /error="invalid_token", error_description="[^"]*audience/ },
      { what: 'expired', token: await provider.mint(good, { audience: mcpUrl.href, subject: 'alice', expiresAt: now - 60 }), status: 401, challenge: /error="invalid_token", error_description="[^"]*expired/ },
      { what: 'another organisation', token: await provider.mint({ scope: 'mcp', org: 'globex' }, { audience: mcpUrl.href, subject: 'bob', expiresAt: now + 300 }), status: 403, challenge: /error_description="[^"]*'globex' is not admitted/ },
      { what: 'no mcp scope', token: await provider.mint({ scope: 'read', org: 'acme' }, { audience: mcpUrl.href, subject: 'alice', expiresAt: now + 300 }), status: 403, challenge: /error="insufficient_scope", scope="mcp"/ },
    ];
    for (const { what, token, status, challenge } of cases) {
      const response = await postInitialize(mcpUrl, token);
      assert.equal(response.status, status, what);
      const header = response.headers.get('www-authenticate') ?? '';
      assert.ok(header.startsWith(`Bearer realm="quiver", ${metadata}`), `${what}: ${header}`);
      assert.match(header, challenge, what);
      const body = (await response.json()) as { jsonrpc: string; error: { code: number } };
      assert.equal(body.error.code, -32000, `${what}: a JSON-RPC error body`);
    }
    // The same token with the right audience and time is accepted: the refusals are about those claims.
    const accepted = await postInitialize(mcpUrl, await provider.mint(good, { audience: mcpUrl.href, subject: 'alice', expiresAt: now + 300 }));
    assert.equal(accepted.status, 200);
  });

  it('the MCP Inspector CLI (1.0.3, headers only, no OAuth flow of its own) lists tools with the obtained token', { skip: browserSkip, timeout: 120_000 }, async () => {
    assert.ok(obtainedToken, 'the SDK 1.x case obtained a token');
    const listed = await run(process.execPath, [inspector, mcpUrl.href, '--transport', 'http', '--method', 'tools/list', '--header', `Authorization: Bearer ${obtainedToken}`], { cwd: inspectorCwd, timeout: 60_000 });
    const names = (JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    assert.ok(names.includes('search_tools') && names.includes('call_tool'), names.join(', '));
    const refused = await run(process.execPath, [inspector, mcpUrl.href, '--transport', 'http', '--method', 'tools/list'], { cwd: inspectorCwd, timeout: 60_000 }).catch((error: { code: number; stderr: string; stdout: string }) => error);
    assert.notEqual((refused as { code?: number }).code ?? 0, 0, 'without the token the Inspector is refused');
  });

  it('an API key keeps working beside tokens', { skip: browserSkip }, async () => {
    const { key } = await app.apiKeys.create({ name: 'beside tokens', scopes: ['mcp'] });
    const client = new Client({ name: 'key', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      await searchAndCall(client);
    } finally {
      await client.close();
    }
  });
});
