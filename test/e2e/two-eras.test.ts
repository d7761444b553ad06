/**
 * Issue #24: `quiver serve` answers MCP 2026-07-28 clients and 2025-11-25 clients on the same
 * endpoints. A real SDK v2 client (`@modelcontextprotocol/client`) pinned to 2026-07-28, over
 * Streamable HTTP with an API key and over stdio: lists tools, searches, lists again (the list
 * is byte-identical: a search never changes it), and calls a found tool through `call_tool`;
 * no session id is issued. The same flow with an SDK 1.x client on the still surface
 * (`--exposure still`), and the 2025 default (binding) measured for contrast. The wire rules
 * the SDK client does not exercise (header/body mismatch, unknown version, unknown method,
 * cache hints, `resultType`) are checked with raw requests.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { QUIVER_BIN, runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { createTwinPluginFolder } from './fixtures/twin-server.ts';

const MODERN = '2026-07-28';
type ToolsResult = { tools: Array<{ name: string }> };
type CallResult = { content?: Array<{ type: string; text?: string }>; structuredContent?: unknown; isError?: boolean };
const text = (result: CallResult) => (result.content ?? []).map((c) => c.text ?? '').join('');

/** The flow every client runs: list, search, list again, call the found tool through call_tool. */
async function stillFlow(client: { listTools(): Promise<ToolsResult>; callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> }): Promise<void> {
  const first = await client.listTools();
  assert.deepEqual(first.tools.map((tool) => tool.name), ['search_tools', 'call_tool']);
  const searched = (await client.callTool({ name: 'search_tools', arguments: { query: 'echo text back', limit: 3 } })) as CallResult;
  assert.ok(!searched.isError, text(searched));
  const found = (searched.structuredContent as { tools: Array<{ name: string; description: string; inputSchema: unknown }> }).tools;
  const echo = found.find((tool) => tool.name === 'alpha__echo');
  assert.ok(echo, `search found alpha__echo: ${found.map((tool) => tool.name).join(', ')}`);
  assert.deepEqual(echo.inputSchema, { type: 'object', properties: { text: { type: 'string' } } }, 'the full definition comes back');
  const second = await client.listTools();
  assert.equal(JSON.stringify(second.tools), JSON.stringify(first.tools), 'the list is byte-identical after a search');
  const called = (await client.callTool({ name: 'call_tool', arguments: { name: 'alpha__echo', arguments: { text: 'hi' } } })) as CallResult;
  assert.equal(text(called), 'echo from alpha: hi');
  assert.equal(JSON.stringify((await client.listTools()).tools), JSON.stringify(first.tools), 'and after a call');
}

describe('two eras of MCP clients on quiver serve (issue #24)', { timeout: 300_000 }, () => {
  let root: string;
  let env: Record<string, string>;
  let key: string;
  let served: { child: ChildProcess; url: string } | undefined;
  let mcpUrl: URL;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-eras-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent' };
    await createTwinPluginFolder(root, 'alpha');
    const added = await runBinary(['plugin', 'add', join(root, 'alpha'), '--name', 'alpha'], env, 120_000);
    assert.equal(added.code, 0, added.stderr);
    const created = await runBinary(['keys', 'create', 'eras', '--scope', 'mcp', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    key = (JSON.parse(created.stdout) as { key: string }).key;
    served = await startServe(['--http', '127.0.0.1:0'], env, 120_000);
    mcpUrl = new URL('/mcp', served.url);
  });

  after(async () => {
    if (served) await stopChild(served.child);
    rmSync(root, { recursive: true, force: true });
  });

  const auth = () => ({ authorization: `Bearer ${key}` });
  const stdioEnv = () => ({ ...(process.env as Record<string, string>), ...env });

  it('a v2 client pinned to 2026-07-28 over HTTP with a key: still list, search, same bytes, call_tool; no session', async () => {
    const transport = new ModernHttpTransport(mcpUrl, { requestInit: { headers: auth() } });
    const client = new ModernClient({ name: 'eras-modern-http', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(transport);
    try {
      await stillFlow(client);
      assert.equal(transport.sessionId, undefined, 'no Mcp-Session-Id in the stateless era');
    } finally {
      await client.close();
    }
  });

  it('a v2 client pinned to 2026-07-28 over stdio: the same flow', async () => {
    const client = new ModernClient({ name: 'eras-modern-stdio', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new ModernStdioTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env: stdioEnv(), stderr: 'pipe' }));
    try {
      await stillFlow(client);
    } finally {
      await client.close();
    }
  });

  it('an SDK 1.x client (2025-11-25) on the still surface, over HTTP and stdio: the same flow', async () => {
    const http = new Client({ name: 'eras-legacy-http', version: '1.0.0' });
    await http.connect(new StreamableHTTPClientTransport(new URL('/mcp?exposure=still', served!.url), { requestInit: { headers: auth() } }));
    try {
      await stillFlow(http as never);
    } finally {
      await http.close();
    }
    const stdio = new Client({ name: 'eras-legacy-stdio', version: '1.0.0' });
    await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio', '--exposure', 'still'], env: stdioEnv(), stderr: 'pipe' }));
    try {
      await stillFlow(stdio as never);
    } finally {
      await stdio.close();
    }
  });

  it('the 2025 default still binds: the list grows after a search (kept for list_changed clients)', async () => {
    const client = new Client({ name: 'eras-legacy-default', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: auth() } }));
    try {
      const before = JSON.stringify((await client.listTools()).tools);
      await client.callTool({ name: 'search_tools', arguments: { query: 'echo text back', limit: 3 } });
      const after = (await client.listTools()).tools;
      assert.ok(after.some((tool) => tool.name === 'alpha__echo'));
      assert.ok(JSON.stringify(after).length > before.length);
    } finally {
      await client.close();
    }
  });

  /** A raw 2026-07-28 POST with the standard headers and the `_meta` envelope. */
  async function modernPost(method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    };
    const name: Record<string, string> = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
    const response = await fetch(mcpUrl, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': method, ...name, ...headers },
      body: JSON.stringify(body),
    });
    const raw = await response.text();
    const json = raw.startsWith('{') ? raw : (raw.split('\n').find((line) => line.startsWith('data: ')) ?? 'data: null').slice(6);
    return { status: response.status, sessionId: response.headers.get('mcp-session-id'), message: JSON.parse(json) as { result?: Record<string, unknown>; error?: { code: number; data?: unknown } } };
  }

  it('the 2026-07-28 wire: discover, resultType and cache hints, header mismatch, unknown version and method', async () => {
    const discover = await modernPost('server/discover', {});
    assert.equal(discover.status, 200);
    assert.ok((discover.message.result?.supportedVersions as string[]).includes(MODERN), JSON.stringify(discover.message));
    assert.equal(discover.sessionId, null);

    const list = await modernPost('tools/list', {});
    assert.equal(list.message.result?.resultType, 'complete');
    assert.equal(list.message.result?.cacheScope, 'private');
    assert.equal(typeof list.message.result?.ttlMs, 'number');

    const mismatch = await modernPost('tools/list', {}, { 'mcp-method': 'prompts/list' });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.message.error?.code, -32020);

    const unknownVersion = await modernPost('tools/list', {}, { 'mcp-protocol-version': '2099-01-01' });
    const body = await fetch(mcpUrl, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const refused = (await body.json()) as { error: { code: number; data: { supported: string[] } } };
    assert.equal(refused.error.code, -32022, JSON.stringify(refused));
    assert.ok(refused.error.data.supported.includes(MODERN));
    assert.notEqual(unknownVersion.status, 200);

    const unknownMethod = await modernPost('no/such_method', {});
    assert.equal(unknownMethod.message.error?.code, -32601);
  });
});
