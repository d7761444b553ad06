/**
 * Issue #24, MCP Apps and caller capabilities through the real binary on each backend, with a
 * real plugin on the v2 SDK (2026-07-28 only) that serves a `ui://` view of type
 * `text/html;profile=mcp-app`, a tool naming it, a tool only its app calls, and a resource and
 * prompt echoing the client capabilities their request declared.
 *
 * - An SDK 1.x client (2025 era, default `search` exposure) over HTTP: the view is listed and
 *   read at `ui://apps/forecast/view.html` (scheme kept, namespaced inside it) with its MIME type
 *   and `_meta.ui`; the app's tools are callable without a search while a plain tool still asks
 *   for one; a found tool's `_meta.ui.resourceUri` names the address that reads the view.
 * - A v2 client pinned to 2026-07-28, over HTTP and stdio: `search_tools` returns the tool's
 *   `_meta.ui` at that address and the view reads from it.
 * - Capabilities: the 2026 plugin's `resources/read` and `prompts/get` carry the capabilities of
 *   the client that asked (a 2026 client's per-request ones, a 2025 client's session ones), plus
 *   the MCP Apps extension Quiver declares to every plugin.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { QUIVER_BIN, runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { appsPluginFolder } from '../helpers/sdk-plugin-folders.ts';

const MODERN = '2026-07-28';
const VIEW = 'ui://apps/forecast/view.html';
const APP_MIME = 'text/html;profile=mcp-app';
/** What Quiver declares to every plugin besides the caller's capabilities: it passes app views through. */
const UI = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [APP_MIME] } } };
type CallResult = { content?: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown> };
const text = (result: unknown): string => ((result as CallResult).content ?? []).map((item) => item.text ?? '').join('');

describeEachBackend('MCP Apps and caller capabilities through the gateway (issue #24)', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;
  let served: { child: ChildProcess; url: string } | undefined;
  let mcpUrl: URL;
  let key = '';

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-apps-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    store = await processStore(backend);
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent', ...store.env };
    const added = await runBinary(['plugin', 'add', appsPluginFolder(join(root, 'apps')), '--name', 'apps'], env, 240_000);
    assert.equal(added.code, 0, added.stderr);
    const created = await runBinary(['keys', 'create', 'apps-test', '--scope', 'mcp', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    key = (JSON.parse(created.stdout) as { key: string }).key;
    served = await startServe(['--http', '127.0.0.1:0'], env, 180_000);
    mcpUrl = new URL('/mcp', served.url);
  });

  after(async () => {
    if (served) await stopChild(served.child);
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a 2025 client: the view keeps ui://, its tools are called without a search, a found tool names the view', { timeout: 240_000 }, async () => {
    const client = new Client({ name: 'apps-2025', version: '1.0.0' }, { capabilities: { roots: {} } });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const { resources } = await client.listResources();
      const view = resources.find((resource) => resource.uri === VIEW);
      assert.ok(view, `the view is listed at ${VIEW}: ${JSON.stringify(resources.map((resource) => resource.uri))}`);
      assert.equal(view.mimeType, APP_MIME);
      assert.deepEqual(view._meta, { ui: { prefersBorder: true } });

      const read = await client.readResource({ uri: VIEW });
      const content = read.contents[0] as { uri: string; mimeType?: string; text?: string; _meta?: Record<string, unknown> };
      assert.equal(content.uri, VIEW);
      assert.equal(content.mimeType, APP_MIME);
      assert.match(content.text ?? '', /id="forecast"/);
      assert.deepEqual(content._meta, { ui: { csp: { connectDomains: ['https://api.example.com'] }, prefersBorder: true } });

      // The app's own tools run without a search (the model never searched for them)…
      assert.equal(text(await client.callTool({ name: 'apps__refresh_forecast', arguments: { city: 'Oslo' } })), 'refreshed Oslo');
      assert.equal(text(await client.callTool({ name: 'apps__show_forecast', arguments: { city: 'Oslo' } })), 'forecast for Oslo: sunny');
      // …and without joining the session's list; a plain tool still needs one.
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      assert.deepEqual(listed.sort(), ['call_tool', 'search_tools']);
      await assert.rejects(client.callTool({ name: 'apps__plain_lookup', arguments: { city: 'Oslo' } }), /search_tools/);

      await client.callTool({ name: 'search_tools', arguments: { query: 'weather forecast interactive view city' } });
      const found = (await client.listTools()).tools.find((tool) => tool.name === 'apps__show_forecast');
      assert.ok(found, 'the search bound the view tool');
      assert.equal((found._meta as { ui?: { resourceUri?: string } }).ui?.resourceUri, VIEW);

      // Caller capabilities reach the 2026 plugin on reads and prompts: this session's own.
      const caps = await client.readResource({ uri: 'quiver://apps/caps%3A%2F%2Fdeclared' });
      assert.deepEqual(JSON.parse((caps.contents[0] as { text: string }).text), { roots: {}, ...UI });
      const prompt = await client.getPrompt({ name: 'apps__declared_capabilities' });
      assert.deepEqual(JSON.parse((prompt.messages[0]!.content as { text: string }).text), { roots: {}, ...UI });
    } finally {
      await client.close();
    }
  });

  async function modernChecks(client: ModernClient): Promise<void> {
    const searched = await client.callTool({ name: 'search_tools', arguments: { query: 'weather forecast interactive view city' } });
    const tools = ((searched as CallResult).structuredContent?.['tools'] ?? []) as Array<{ name: string; _meta?: { ui?: { resourceUri?: string } } }>;
    const found = tools.find((tool) => tool.name === 'apps__show_forecast');
    assert.ok(found, `search found the view tool: ${JSON.stringify(tools.map((tool) => tool.name))}`);
    assert.equal(found._meta?.ui?.resourceUri, VIEW);
    const read = await client.readResource({ uri: VIEW });
    const content = read.contents[0] as { uri: string; mimeType?: string; _meta?: Record<string, unknown> };
    assert.equal(content.uri, VIEW);
    assert.equal(content.mimeType, APP_MIME);
    assert.deepEqual(content._meta, { ui: { csp: { connectDomains: ['https://api.example.com'] }, prefersBorder: true } });
    // Per-request capabilities of this client reach the plugin's read and prompt.
    const caps = await client.readResource({ uri: 'quiver://apps/caps%3A%2F%2Fdeclared' });
    assert.deepEqual(JSON.parse((caps.contents[0] as { text: string }).text), { elicitation: { form: {} }, ...UI });
    const prompt = await client.getPrompt({ name: 'apps__declared_capabilities' });
    assert.deepEqual(JSON.parse((prompt.messages[0]!.content as { text: string }).text), { elicitation: { form: {} }, ...UI });
    assert.equal(text(await client.callTool({ name: 'call_tool', arguments: { name: 'apps__refresh_forecast', arguments: { city: 'Rome' } } })), 'refreshed Rome');
  }

  const pinned = (name: string) => new ModernClient({ name, version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } });

  it('a pinned 2026-07-28 client over HTTP: search shows the view address, the view reads, capabilities forwarded', { timeout: 240_000 }, async () => {
    const client = pinned('apps-2026-http');
    await client.connect(new ModernHttpTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      await modernChecks(client);
    } finally {
      await client.close();
    }
  });

  it('a pinned 2026-07-28 client over stdio: the same', { timeout: 240_000 }, async () => {
    const client = pinned('apps-2026-stdio');
    await client.connect(new ModernStdioTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' }));
    try {
      await modernChecks(client);
    } finally {
      await client.close();
    }
  });
});
