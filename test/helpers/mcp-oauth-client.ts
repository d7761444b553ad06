/**
 * The client side of MCP authorization as a host keeps it, shared by the OAuth browser tests
 * (external provider and built-in authorization server): a loopback redirect target, an SDK
 * `OAuthClientProvider` that records what the flow hands it, and the two checks every case makes
 * once a token is in hand (a raw initialize, and search_tools + call_tool through a client).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export type CallResult = { content?: Array<{ type: string; text?: string }>; structuredContent?: unknown; isError?: boolean };

export const resultText = (result: CallResult) => (result.content ?? []).map((c) => c.text ?? '').join('');

/** A loopback redirect target, as a CLI or desktop client runs one: it records each callback's query. */
export async function startCallbackServer(): Promise<{ url: string; next(): Promise<URLSearchParams>; close(): Promise<void> }> {
  let waiting: ((params: URLSearchParams) => void) | undefined;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    response.setHeader('content-type', 'text/plain').end('authorized; you may close this window');
    waiting?.(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise((resolve) => (waiting = resolve)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The client side of the flow as an MCP host keeps it: registration, verifier, tokens, the URL to open and the state it sent. */
export class TestOAuthClient implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  sentState = '';
  authorizationUrl: URL | undefined;
  discovered: OAuthDiscoveryState | undefined;
  /** `metadata` adds to (or replaces) the registration fields every case sends. */
  constructor(
    readonly redirect: string,
    private readonly metadata: Partial<OAuthClientMetadata> = {},
  ) {}
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'quiver oauth test', redirect_uris: [this.redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', ...this.metadata } as OAuthClientMetadata;
  }
  state(): string {
    this.sentState = randomBytes(16).toString('hex');
    return this.sentState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  // Kept with the verifier, so the callback leg is bound to the authorization server discovered (SEP-2352).
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovered = state;
  }
  discoveryState() {
    return this.discovered;
  }
}

/** A raw 2025-era initialize on /mcp, with or without a bearer token: its answer says whether the token is admitted. */
export async function postInitialize(mcpUrl: URL, token?: string): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
}

/** Searches for the twin fixture's echo tool and calls it through call_tool (either SDK line's client). */
export async function searchAndCall(client: { callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> }): Promise<void> {
  const searched = (await client.callTool({ name: 'search_tools', arguments: { query: 'echo text back', limit: 3 } })) as CallResult;
  assert.ok(!searched.isError, resultText(searched));
  const found = (searched.structuredContent as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
  assert.ok(found.includes('alpha__echo'), `search found alpha__echo: ${found.join(', ')}`);
  const called = (await client.callTool({ name: 'call_tool', arguments: { name: 'alpha__echo', arguments: { text: 'hi' } } })) as CallResult;
  assert.equal(resultText(called), 'echo from alpha: hi');
}
