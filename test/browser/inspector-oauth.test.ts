/**
 * Issue #27: the MCP Inspector CLI connects to Quiver over HTTP with OAuth and lists tools. The
 * Inspector is 2.12.0 (`@modelcontextprotocol/inspector --cli`), the first line whose CLI runs
 * the MCP authorization flow itself; it needs Node >= 22.19, so it runs on Node 22 from the npm
 * registry (test/helpers/inspector-v2.ts) whatever Node runs the tests. Quiver takes tokens of a
 * real OpenID provider (`oidc-provider`) on loopback. The Inspector starts from Quiver's 401
 * alone: discovery, Dynamic Client Registration, authorization code + PKCE; it prints the URL
 * ("Please navigate to: …"), which headless Chromium opens and walks through the provider's
 * login and consent pages as a user would, back to the Inspector's loopback callback. Then it
 * lists Quiver's tools. Without the flow (--stored-auth-only) it is refused with auth_required.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { browserSkip, closeBrowserTest, openBrowserPage } from '../helpers/browser.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { ensureInspectorV2, INSPECTOR_VERSION } from '../helpers/inspector-v2.ts';
import { openTempDir } from '../plugins/helpers.ts';

/** A free loopback port for the Inspector's callback listener. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Runs the Inspector CLI; `onStderr` sees its stderr as it comes. */
function runInspector(inspector: { node: string; launcher: string }, args: string[], env: NodeJS.ProcessEnv, onStderr: (text: string) => void = () => undefined): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(inspector.node, [inspector.launcher, '--cli', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      onStderr(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe(`the MCP Inspector CLI ${INSPECTOR_VERSION} with OAuth against Quiver (issue #27)`, { skip: browserSkip }, () => {
  let home: string;
  let provider: TestOidcProvider;
  let app: App;
  let server: HttpServer;
  let context: BrowserContext | undefined;
  let page: Page;
  let inspector: { node: string; launcher: string };
  let env: NodeJS.ProcessEnv;
  const resources: string[] = [];

  before(async () => {
    // Fetched once into the cache (Node 22 and the Inspector from the npm registry).
    inspector = ensureInspectorV2();
    home = await openTempDir('inspector-oauth');
    provider = await startOidcProvider({ accounts: { alice: { org: 'acme' } }, resources: () => resources });
    app = await createApp(loadConfig({
      QUIVER_HOME: home,
      QUIVER_DATABASE_URL: 'memory://',
      QUIVER_LOG_LEVEL: 'silent',
      QUIVER_OAUTH_ISSUER: provider.issuer,
      QUIVER_OAUTH_ORGS: JSON.stringify({ acme: { org: 'acme', scopes: ['mcp'] } }),
    }));
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    resources.push(new URL('/mcp', server.url).href);
    ({ context, page } = await openBrowserPage(home, { ignore: /ERR_NAME_NOT_RESOLVED/ }));
    // The Inspector keeps its state under HOME; its secrets in memory (no keychain here); no TTY, so it is told a person is present.
    env = { PATH: process.env.PATH, HOME: join(home, 'inspector-home'), MCP_INSPECTOR_SECRET_STORE: 'memory', MCP_AUTO_OPEN_ENABLED: 'true', NO_COLOR: '1' };
  });

  after(() => closeBrowserTest({ context, server, app, folder: home }));

  it('is refused without an authorization when it may not start the flow', { timeout: 180_000 }, async () => {
    const refused = await runInspector(inspector, [new URL('/mcp', server.url).href, '--transport', 'http', '--method', 'tools/list', '--format', 'json', '--stored-auth-only'], env);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr + refused.stdout, /auth_required/);
  });

  it('runs discovery, registration and code + PKCE from the 401 (the user signs in in Chromium), then lists the tools', { timeout: 300_000 }, async () => {
    const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    let browsing: Promise<void> | undefined;
    const walk = async (authorizationUrl: URL) => {
      await page.goto(authorizationUrl.href);
      for (let step = 0; step < 8 && !page.url().startsWith(callback); step++) {
        const form = page.locator('input[name="login"]');
        const consent = page.getByRole('button', { name: 'Continue' });
        await Promise.race([form.waitFor(), consent.waitFor(), page.waitForURL((url) => url.href.startsWith(callback))]);
        if (page.url().startsWith(callback)) break;
        if (await form.count()) {
          await form.fill('alice');
          await page.locator('input[name="password"]').fill('any password');
          await page.getByRole('button', { name: 'Sign-in' }).click();
        } else await consent.click();
        await page.waitForLoadState();
      }
    };
    const listed = await runInspector(inspector, [new URL('/mcp', server.url).href, '--transport', 'http', '--method', 'tools/list', '--format', 'json', '--callback-url', callback], env, (stderr) => {
      const printed = /Please navigate to: (\S+)/.exec(stderr)?.[1];
      if (printed === undefined || browsing) return;
      const url = new URL(printed);
      assert.equal(url.origin, provider.issuer);
      assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(url.searchParams.get('resource'), new URL('/mcp', server.url).href);
      browsing = walk(url);
    });
    assert.ok(browsing, `the Inspector printed no authorization URL: ${listed.stderr.slice(-2000)}`);
    await browsing;
    assert.equal(listed.code, 0, listed.stderr.slice(-2000));
    // --format json: one object, the method's result under `result`.
    const names = (JSON.parse(listed.stdout) as { result: { tools: Array<{ name: string }> } }).result.tools.map((tool) => tool.name);
    assert.ok(names.includes('search_tools'), names.join(', '));
  });
});
