/**
 * Issue #27: a remote plugin authorized per user. The plugin is a real MCP server on loopback
 * (SDK 1.x, Streamable HTTP) that accepts only JWT access tokens of a real OpenID provider
 * (`oidc-provider`) for its own URL and answers with the token's subject. An admin authorizes
 * the hub (install-time discovery), installs it and sets `quiver plugin authorize URL --per user`;
 * two users (bob, carol) each authorize through the flow (`--user ID`: the printed URL opened in
 * headless Chromium, signed in as that user at the provider). Then, over `/mcp` with API keys of
 * three principals, each call returns its caller's own subject on its own upstream connection;
 * the third user (dave), who never authorized, gets an error naming `quiver plugin authorize URL
 * --user dave` and no request reaches the server with anyone's token. Removing the plugin revokes
 * every owner's grant at the provider. Both backends.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { createSecretBox, loadSecretKey } from '../../src/plugins/secret-box.ts';
import { findRemoteOAuth, listRemoteOAuthOwners } from '../../src/store/repositories/remote-oauth.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { signInAndConsent, startProtectedServer } from '../helpers/protected-mcp-server.ts';
import { browserSkip, closeBrowserTest, openBrowserPage } from '../helpers/browser.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { openTempDir } from '../plugins/helpers.ts';

/** The text of a tool result or of the error a call failed with. */
function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((block) => block.text ?? '').join('\n');
}

describeEachBackend('a remote plugin authorized per user (issue #27)', (backend) => {
  let home: string;
  let provider: TestOidcProvider;
  let remote: Awaited<ReturnType<typeof startProtectedServer>>;
  let app: App;
  let server: HttpServer;
  let context: BrowserContext | undefined;
  let page: Page;
  const resources: string[] = [];

  before(async () => {
    if (browserSkip) return;
    home = await openTempDir('remote-oauth-per-user');
    provider = await startOidcProvider({ accounts: {}, resources: () => resources, refreshTokens: true });
    remote = await startProtectedServer(provider.issuer);
    resources.push(remote.url);
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES: 'loopback' }), { db: await backend.open() });
    ({ context, page } = await openBrowserPage(home));
  });

  after(async () => {
    if (browserSkip) return;
    await closeBrowserTest({ context, server, app });
    await remote?.close();
    await provider?.close();
    await closeBrowserTest({ folder: home });
  });

  /** `quiver plugin authorize URL ...flags` as an admin runs it, the printed URL signed in as `login` (a fresh browser session each time). */
  async function authorize(flags: string[], login: string): Promise<void> {
    await context!.clearCookies();
    let browsing: Promise<void> | undefined;
    let stderr = '';
    const io = {
      stdout: () => undefined,
      stderr: (text: string) => {
        stderr += text;
        const printed = /\n {2}(http\S+)\n/.exec(text)?.[1];
        if (printed !== undefined && !browsing) browsing = signInAndConsent(page, new URL(printed), login);
      },
    };
    const code = await runCli(['plugin', 'authorize', remote.url, ...flags, '--timeout', '120'], commands, io, {}, { app });
    await browsing;
    assert.equal(code, 0, stderr);
  }

  /** Calls `remote__whoami` over /mcp with an API key of `userId`. */
  async function whoamiAs(userId: string): Promise<{ text: string; isError: boolean }> {
    const { key } = await app.apiKeys.create({ name: `agent-${userId}`, scopes: ['mcp'], userId });
    const client = new Client({ name: `agent-${userId}`, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = await client.callTool({ name: 'call_tool', arguments: { name: 'remote__whoami', arguments: {} } });
      return { text: textOf(result), isError: result.isError === true };
    } catch (error) {
      return { text: (error as Error).message, isError: true };
    } finally {
      await client.close();
    }
  }

  it('each user calls with their own authorization on their own connection; one without gets the way to connect; removal revokes all', { skip: browserSkip, timeout: 420_000 }, async () => {
    // The admin's hub authorization: install-time discovery is the admin's act.
    await authorize([], 'admin');
    await app.plugins.add(remote.url, { name: 'remote' });
    let out = '';
    const io = { stdout: (text: string) => void (out += text), stderr: () => undefined };
    assert.equal(await runCli(['plugin', 'authorize', remote.url, '--per', 'everyone'], commands, io, {}, { app }), 2);
    assert.equal(await runCli(['plugin', 'authorize', remote.url, '--per', 'user'], commands, io, {}, { app }), 0);
    assert.match(out, /carry each user's own authorization/);
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });

    // Before anyone connected: bob is refused with the way to connect, never served with the admin's token.
    remote.seen.length = 0;
    const early = await whoamiAs('bob');
    assert.ok(early.isError, early.text);
    assert.match(early.text, new RegExp(`quiver plugin authorize ${remote.url.replace(/[.]/g, '\\.')} --user bob`));
    assert.deepEqual(remote.seen, [], 'no request reached the server');

    await authorize(['--user', 'bob'], 'bob');
    await authorize(['--user', 'carol'], 'carol');
    out = '';
    assert.equal(await runCli(['plugin', 'authorize', remote.url, '--user', 'bob', '--status', '--json'], commands, io, {}, { app }), 0);
    assert.deepEqual((({ per, owner, authorized }) => ({ per, owner, authorized }))(JSON.parse(out) as Record<string, unknown>), { per: 'user', owner: { kind: 'user', id: 'bob' }, authorized: true });
    assert.ok(!/access_token|refresh_token/.test(out), 'no token printed');

    // Each owner's state is sealed to its URL and owner: bob's row does not open as carol's.
    const box = createSecretBox(loadSecretKey({ homeDir: home }).key);
    const bobSealed = await findRemoteOAuth(app.db, remote.url, { kind: 'user', id: 'bob' });
    assert.ok(bobSealed);
    assert.throws(() => box.open(bobSealed, `quiver/remote-oauth/${remote.url}#user:carol`));
    const bobState = JSON.parse(box.open(bobSealed, `quiver/remote-oauth/${remote.url}#user:bob`)) as { tokens: { refresh_token: string }; client: { client_id: string } };

    assert.deepEqual(await whoamiAs('bob'), { text: 'user bob', isError: false });
    assert.deepEqual(await whoamiAs('carol'), { text: 'user carol', isError: false });
    assert.deepEqual(await whoamiAs('bob'), { text: 'user bob', isError: false });
    // (An earlier deepEqual with [] narrowed the type of seen: widen it back.)
    assert.deepEqual((remote.seen as Array<{ sub: string }>).filter((entry) => entry.sub === 'admin'), [], "no call ran on the admin's hub token");
    const pluginId = (await app.plugins.upstreamSpec('remote')).pluginId;
    assert.equal(app.supervisor.processes().filter((live) => live.pluginId === pluginId).length, 2, 'one upstream connection per owner');

    remote.seen.length = 0;
    const dave = await whoamiAs('dave');
    assert.ok(dave.isError, dave.text);
    assert.match(dave.text, new RegExp(`no authorization at .* for user 'dave': authorize it with 'quiver plugin authorize ${remote.url.replace(/[.]/g, '\\.')} --user dave'`));
    assert.deepEqual(remote.seen, [], "dave's call never reached the server with anyone's token");

    // Removal revokes every owner's grant: the hub's, bob's and carol's.
    assert.equal((await listRemoteOAuthOwners(app.db, remote.url)).length, 3);
    await app.plugins.remove('remote');
    assert.deepEqual(await listRemoteOAuthOwners(app.db, remote.url), []);
    assert.equal((await app.remoteOAuth.status(remote.url, { kind: 'user', id: 'carol' })).authorized, false);
    const refused = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: bobState.tokens.refresh_token, client_id: bobState.client.client_id, resource: remote.url }),
    });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_grant');
  });
});
