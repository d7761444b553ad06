/**
 * Shared pieces of the gateway tests: plugin specs for the fixture server and
 * server-everything, an in-process Streamable HTTP gateway on a real socket, and MCP SDK
 * clients over HTTP and stdio.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway/gateway.ts';
import { createMcpHttpHandler, type McpHttpHandler } from '../../src/gateway/http.ts';
import { createLocalTestBackend, type LocalPluginSpec, type LocalTestBackend } from '../helpers/gateway-backend/local-backend.ts';
import type { MarketplaceSuggestion, SessionIdentity } from '../../src/gateway/backend.ts';

export const repoRoot = new URL('../../', import.meta.url).pathname;
export const fixtureServer = join(repoRoot, 'test/fixtures/gateway/fixture-server.ts');
export const gatewayStdioScript = join(repoRoot, 'test/fixtures/gateway/gateway-stdio.ts');

/** A plugin served by the fixture server with the given tools. */
export function fixturePlugin(name: string, tools: string[], extra: Partial<LocalPluginSpec> & { serverArgs?: string[] } = {}): LocalPluginSpec {
  const { serverArgs = [], ...rest } = extra;
  return {
    name,
    command: process.execPath,
    args: ['--import', 'tsx', fixtureServer, '--name', name, '--tools', tools.join(','), ...serverArgs],
    cwd: repoRoot,
    manifest: { title: name, summary: `${name} tools`, whenToUse: [`when you need ${name}`], ...rest.manifest },
    ...rest,
  };
}

/** The reference MCP server from the MCP project (a devDependency). */
export function everythingPlugin(extra: Partial<LocalPluginSpec> = {}): LocalPluginSpec {
  return {
    name: 'everything',
    command: process.execPath,
    args: [join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    cwd: repoRoot,
    manifest: { title: 'Everything demo', summary: 'MCP reference server', whenToUse: ['testing MCP features'], category: 'core' },
    ...extra,
  };
}

/** The standard set of plugins most tests use. */
export function standardPlugins(): LocalPluginSpec[] {
  return [
    fixturePlugin('billing', ['create_invoice', 'refund_payment', 'list_invoices'], { manifest: { title: 'Billing', category: 'data', tags: ['invoice', 'payment'] } }),
    fixturePlugin('mail', ['send_email'], { manifest: { title: 'Mail', category: 'communication' } }),
    fixturePlugin('util', ['echo', 'add', 'count', 'fetch_url', 'slow', 'crash', 'fail', 'explode'], {
      manifest: { title: 'Utilities', category: 'automation' },
      callTimeoutMs: 2000,
      serverArgs: ['--resources', '--prompts'],
    }),
    fixturePlugin('memory', ['remember'], { manifest: { title: 'Memory', category: 'memory', visibility: 'always' } }),
    fixturePlugin('audit', ['query_database'], { manifest: { title: 'Audit', visibility: 'silent' } }),
    fixturePlugin('globex', ['create_secret_report'], { manifest: { title: 'Globex reports', category: 'data' }, grants: { orgs: ['globex'] } }),
  ];
}

export const marketplace: MarketplaceSuggestion[] = [
  { name: 'pdf-tools', title: 'PDF tools', summary: 'Extract text and tables from PDF documents', category: 'data', tools: ['extract_pdf_text'], install: 'quiver plugins install npm:@example/pdf-tools' },
];

/** An identity with defaults. */
export function identity(overrides: Partial<SessionIdentity> = {}): SessionIdentity {
  return { workspace: 'default', project: null, orgId: 'acme', userId: 'u1', roles: [], tier: null, ...overrides };
}

/** A gateway over HTTP on 127.0.0.1 with the local backend; identities travel in a test header. */
export interface HttpHarness {
  backend: LocalTestBackend;
  gateway: Gateway;
  handler: McpHttpHandler<SessionIdentity>;
  url: URL;
  /** A connected client for an identity, recording list_changed notifications. */
  connect(who?: Partial<SessionIdentity>, options?: { url?: URL }): Promise<TestClient>;
  close(): Promise<void>;
}

export interface TestClient {
  client: Client;
  transport: StreamableHTTPClientTransport | StdioClientTransport;
  listChanged: { count: number; waitFor(count: number, timeoutMs?: number): Promise<void> };
  close(): Promise<void>;
}

/** Wraps a client so tests can wait for tools/list_changed notifications. */
export function watchListChanged(client: Client): TestClient['listChanged'] {
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const state = {
    count: 0,
    waitFor(count: number, timeoutMs = 5000): Promise<void> {
      if (state.count >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no tools/list_changed #${count} within ${timeoutMs} ms (got ${state.count})`)), timeoutMs);
        waiters.push({ count, resolve: () => { clearTimeout(timer); resolve(); } });
      });
    },
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    state.count += 1;
    for (const waiter of waiters.splice(0)) {
      if (state.count >= waiter.count) waiter.resolve();
      else waiters.push(waiter);
    }
  });
  return state;
}

export async function startHttpHarness(options: { plugins?: LocalPluginSpec[]; gateway?: GatewayOptions; clock?: () => number } = {}): Promise<HttpHarness> {
  const backend = await createLocalTestBackend({ plugins: options.plugins ?? standardPlugins(), marketplace });
  const gateway = createGateway({ backend, ...(options.clock ? { clock: options.clock } : {}), options: { sessions: { sweepIntervalMs: 0 }, ...options.gateway } });
  const handler = createMcpHttpHandler<SessionIdentity>({ gateway, resolveIdentity: (principal) => principal });
  const server = serve({
    fetch: (request: Request) => {
      const header = request.headers.get('x-test-identity');
      return handler.handle(request, header ? (JSON.parse(header) as SessionIdentity) : identity());
    },
    hostname: '127.0.0.1',
    port: 0,
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  const clients: TestClient[] = [];
  return {
    backend,
    gateway,
    handler,
    url,
    async connect(who = {}, connectOptions = {}) {
      const transport = new StreamableHTTPClientTransport(connectOptions.url ?? url, {
        requestInit: { headers: { 'x-test-identity': JSON.stringify(identity(who)) } },
      });
      const client = new Client({ name: 'gateway-test', version: '1.0.0' });
      const listChanged = watchListChanged(client);
      await client.connect(transport);
      const entry: TestClient = {
        client,
        transport,
        listChanged,
        async close() {
          await transport.terminateSession().catch(() => {});
          await client.close();
        },
      };
      clients.push(entry);
      return entry;
    },
    async close() {
      await Promise.allSettled(clients.map((entry) => entry.close()));
      await handler.close();
      await gateway.close();
      await backend.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes a gateway-stdio config file and returns its path. */
export function writeGatewayConfig(config: { plugins: LocalPluginSpec[]; marketplace?: MarketplaceSuggestion[]; gateway?: GatewayOptions }): string {
  const directory = mkdtempSync(join(tmpdir(), 'quiver-gateway-'));
  const path = join(directory, 'config.json');
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** Spawns the gateway as a process and connects an SDK client over stdio. */
export async function connectStdio(configPath: string, flags: string[] = []): Promise<TestClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', gatewayStdioScript, '--config', configPath, ...flags],
    cwd: repoRoot,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'gateway-stdio-test', version: '1.0.0' });
  const listChanged = watchListChanged(client);
  await client.connect(transport);
  return { client, transport, listChanged, close: () => client.close() };
}

/** The text of a tool result's first text block. */
export function firstText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.find((block) => block.type === 'text')?.text ?? '';
}

/** All text of a tool result. */
export function allText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.filter((block) => block.type === 'text').map((block) => block.text ?? '').join('\n');
}

/** The JSON-RPC messages a stdio gateway writes to `stdout`, one per line, parsed as they arrive. */
export function collectStdioFrames<Frame>(stdout: Readable): Frame[] {
  const frames: Frame[] = [];
  let buffer = '';
  stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') frames.push(JSON.parse(line) as Frame);
  });
  return frames;
}

/** The first of `frames` that `test` accepts, waiting up to `timeoutMs` for it; undefined when none came. */
export async function waitForFrame<Frame>(frames: readonly Frame[], test: (frame: Frame) => boolean, timeoutMs = 30_000): Promise<Frame | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const found = frames.find(test);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return undefined;
}
