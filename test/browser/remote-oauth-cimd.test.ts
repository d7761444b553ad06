/**
 * Issue #27: Quiver uses a Client ID Metadata Document instead of Dynamic Client Registration
 * where the remote plugin's authorization server supports it. Quiver is a real App served over
 * HTTP behind a TLS front on loopback (a self-signed certificate made with openssl), so its
 * public base URL (QUIVER_PUBLIC_URL) is https, as the document's URL must be. The authorization
 * server is the real `oidc-provider` with its Client ID Metadata Document feature (draft-02)
 * turned on, fetching documents with the test's certificate. The admin connects the plugin in
 * Chromium: the authorization request's client_id is the document's URL, the provider fetched
 * the document from Quiver, nothing was registered, and the plugin is then called with its
 * token. A second provider without the feature gets a Dynamic Client Registration from the
 * same Quiver (the fallback; without a public https URL every test of remote-oauth*.test.ts
 * registers dynamically). Both backends.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { CLIENT_METADATA_PATH } from '../../src/plugins/oauth/client-metadata.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { startProtectedServer } from '../helpers/protected-mcp-server.ts';
import { browserSkip, CHROMIUM, CHROMIUM_ARGS, closeBrowserTest, signIn } from '../helpers/browser.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { openTempDir } from '../plugins/helpers.ts';

/** A self-signed certificate for 127.0.0.1, made by openssl in `folder`. */
function selfSignedCertificate(folder: string): { key: Buffer; cert: Buffer } {
  const key = join(folder, 'tls.key');
  const cert = join(folder, 'tls.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

describeEachBackend('Quiver as a client with a Client ID Metadata Document (issue #27)', (backend) => {
  let home: string;
  let tls: { key: Buffer; cert: Buffer };
  let front: HttpsServer;
  let publicUrl = '';
  let quiverPort = 0;
  const documentFetches: string[] = [];
  let provider: TestOidcProvider;
  let plainProvider: TestOidcProvider;
  let remote: Awaited<ReturnType<typeof startProtectedServer>>;
  let plainRemote: Awaited<ReturnType<typeof startProtectedServer>>;
  let app: App;
  let server: HttpServer;
  let context: BrowserContext | undefined;
  let page: Page;
  const resources: string[] = [];

  before(async () => {
    if (browserSkip) return;
    home = await openTempDir('remote-oauth-cimd');
    tls = selfSignedCertificate(home);
    // The TLS front: Quiver's public https URL, passing every request to its HTTP server.
    front = createHttpsServer({ key: tls.key, cert: tls.cert }, (request, response) => {
      if ((request.url ?? '').startsWith(CLIENT_METADATA_PATH)) documentFetches.push(request.headers['user-agent'] ?? '');
      const upstream = httpRequest({ host: '127.0.0.1', port: quiverPort, path: request.url, method: request.method, headers: request.headers }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      upstream.on('error', () => response.writeHead(502).end());
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    publicUrl = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
    const trusting = new Agent({ connect: { ca: tls.cert } });
    provider = await startOidcProvider({
      accounts: { alice: {} },
      resources: () => resources,
      refreshTokens: true,
      // The provider's fetch of client_id documents, trusting the test's certificate (its SSRF dispatcher dropped: loopback is the point here).
      clientMetadataFetch: (url, init) => {
        const { dispatcher: _ssrf, ...rest } = init as RequestInit & { dispatcher?: unknown };
        return undiciFetch(url, { ...(rest as object), dispatcher: trusting } as never) as unknown as Promise<Response>;
      },
    });
    plainProvider = await startOidcProvider({ accounts: { alice: {} }, resources: () => resources });
    remote = await startProtectedServer(provider.issuer);
    plainRemote = await startProtectedServer(plainProvider.issuer);
    resources.push(remote.url, plainRemote.url);
    app = await createApp(
      loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES: 'loopback', QUIVER_PUBLIC_URL: publicUrl }),
      { db: await backend.open() },
    );
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    quiverPort = Number(new URL(server.url).port);
    // The browser sees Quiver at its https URL (the test's certificate is not in Chromium's store).
    context = await chromium.launchPersistentContext(join(home, 'profile'), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, ignoreHTTPSErrors: true });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
  });

  after(async () => {
    if (browserSkip) return;
    await closeBrowserTest({ context, server, app });
    await new Promise<void>((resolve) => {
      front?.closeAllConnections();
      front?.close(() => resolve());
    });
    await remote?.close();
    await plainRemote?.close();
    await provider?.close();
    await plainProvider?.close();
    await closeBrowserTest({ folder: home });
  });

  it('serves the document at its https URL and uses that URL as client_id instead of registering', { skip: browserSkip, timeout: 240_000 }, async () => {
    const documentUrl = `${publicUrl}${CLIENT_METADATA_PATH}`;
    const served = (await (await undiciFetch(documentUrl, { dispatcher: new Agent({ connect: { ca: tls.cert } }) })).json()) as Record<string, unknown>;
    assert.deepEqual(served, {
      client_id: documentUrl,
      client_name: 'Quiver',
      client_uri: `${publicUrl}/`,
      redirect_uris: [`${publicUrl}/api/v1/oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    documentFetches.length = 0;

    await app.plugins.add(remote.url, { name: 'remote' });
    await signIn(page, publicUrl, server.adminKey!);
    await page.getByRole('tab', { name: 'Plugins' }).click();
    const cell = page.locator('[data-oauth="remote"]');
    const authorizationRequests: URL[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin === provider.issuer && url.pathname === '/auth') authorizationRequests.push(url);
    });
    await cell.getByRole('button', { name: 'Connect' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    for (let step = 0; step < 8 && !page.url().startsWith(`${publicUrl}/ui`); step++) {
      const form = page.locator('input[name="login"]');
      const consent = page.getByRole('button', { name: 'Continue' });
      await Promise.race([form.waitFor(), consent.waitFor(), page.locator('#view').waitFor()]);
      if (page.url().startsWith(`${publicUrl}/ui`)) break;
      if (await form.count()) {
        await form.fill('alice');
        await page.locator('input[name="password"]').fill('any password');
        await page.getByRole('button', { name: 'Sign-in' }).click();
      } else await consent.click();
      await page.waitForLoadState();
    }
    await page.getByText('Connected remote').waitFor();
    assert.equal(authorizationRequests[0]?.searchParams.get('client_id'), documentUrl);
    assert.ok(documentFetches.length >= 1, 'the provider fetched the document from Quiver');

    // The stored client is the document's URL: nothing was registered.
    const client = await storedClientId(remote.url);
    assert.equal(client, documentUrl);
    const result = await app.supervisor.callTool(await app.plugins.upstreamSpec('remote'), 'whoami', {});
    assert.deepEqual(result.content, [{ type: 'text', text: 'user alice' }]);
  });

  it('registers dynamically at a server that does not advertise Client ID Metadata Documents, and for a loopback redirect', { skip: browserSkip, timeout: 120_000 }, async () => {
    const { authorizationUrl } = await app.remoteOAuth.begin(plainRemote.url, `${publicUrl}/api/v1/oauth/callback`);
    const clientId = authorizationUrl.searchParams.get('client_id');
    assert.ok(clientId && !clientId.startsWith('https://'), `a registered client_id, got ${clientId}`);
    assert.equal(await storedClientId(plainRemote.url), clientId);
    // A CLI's loopback redirect is not in the document: that authorization registers, even where the document is supported.
    const cli = await app.remoteOAuth.begin(remote.url, 'http://127.0.0.1:9/callback', { kind: 'user', id: 'carol' });
    const cliClient = cli.authorizationUrl.searchParams.get('client_id');
    assert.ok(cliClient && !cliClient.startsWith('https://'), `a registered client_id for the loopback redirect, got ${cliClient}`);
  });

  /** The client_id Quiver stored for the server at `url` (the hub's state, opened with the hub's key). */
  async function storedClientId(url: string): Promise<string | undefined> {
    const { findRemoteOAuth } = await import('../../src/store/repositories/remote-oauth.ts');
    const { createSecretBox, loadSecretKey } = await import('../../src/plugins/secret-box.ts');
    const sealed = await findRemoteOAuth(app.db, url);
    if (!sealed) return undefined;
    const state = JSON.parse(createSecretBox(loadSecretKey({ homeDir: home }).key).open(sealed, `quiver/remote-oauth/${url}`)) as { client?: { client_id?: string } };
    return state.client?.client_id;
  }
});
