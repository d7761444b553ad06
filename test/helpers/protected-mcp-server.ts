/**
 * @module test/helpers/protected-mcp-server
 * For the remote-OAuth tests (issue #27): a real MCP server on loopback (SDK 1.x, Streamable
 * HTTP) that accepts only JWT access tokens of the test's OpenID provider for its own URL,
 * answers 401 with its protected resource metadata otherwise, and says in `whoami` which user a
 * call ran for; and the walk through the provider's login and consent pages in the browser.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * A remote MCP server that requires the provider's tokens for its own URL. Its metadata names
 * `advertisedAuthorizationServer` when given (another spelling of the provider's URL, to test
 * the RFC 8414 issuer check), else the issuer.
 */
export async function startProtectedServer(
  issuer: string,
  options: { advertisedAuthorizationServer?: string } = {},
): Promise<{ url: string; seen: Array<{ sub: string; jti: string }>; close(): Promise<void> }> {
  const seen: Array<{ sub: string; jti: string }> = [];
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  let base = '';
  const server: Server = createServer((request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', base).pathname;
      const mcpUrl = `${base}/mcp`;
      if (path === '/.well-known/oauth-protected-resource/mcp') {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ resource: mcpUrl, authorization_servers: [options.advertisedAuthorizationServer ?? issuer], scopes_supported: ['mcp'] }));
        return;
      }
      if (path !== '/mcp') return void response.writeHead(404).end();
      const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
      let claims: { sub?: string; jti?: string } | undefined;
      try {
        claims = token === undefined ? undefined : (await jwtVerify(token, jwks, { issuer, audience: mcpUrl })).payload;
      } catch {
        claims = undefined;
      }
      if (!claims?.sub) {
        response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`, 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      seen.push({ sub: claims.sub, jti: claims.jti ?? '' });
      const mcp = new McpServer({ name: 'protected', version: '1.0.0' });
      const sub = claims.sub;
      mcp.tool('whoami', 'Says which user the call runs for.', async () => ({ content: [{ type: 'text', text: `user ${sub}` }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      response.on('close', () => void transport.close());
      await mcp.connect(transport);
      await transport.handleRequest(request, response);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/mcp`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Goes through the provider's login and consent pages as `login` until the loopback callback is reached. */
export async function signInAndConsent(page: Page, url: URL, login: string): Promise<void> {
  await page.goto(url.href);
  for (let step = 0; step < 6; step++) {
    if (new URL(page.url()).pathname === '/callback') return;
    const form = page.locator('input[name="login"]');
    const consent = page.getByRole('button', { name: 'Continue' });
    const received = page.getByText('Quiver received the authorization');
    await Promise.race([form.waitFor(), consent.waitFor(), received.waitFor()]);
    if (await received.count()) return;
    if (await form.count()) {
      await form.fill(login);
      await page.locator('input[name="password"]').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
    } else {
      await consent.click();
    }
    await page.waitForLoadState();
  }
}

