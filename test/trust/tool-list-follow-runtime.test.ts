/**
 * Issue #24: a tool a plugin adds at runtime reaches the catalog. A real plugin on the SDK 1.x
 * (`McpServer`, stdio) registers `count_eggs` in its memory when `open_hatch` is called, and the
 * SDK sends `notifications/tools/list_changed`. Its initial list (what a fresh process serves)
 * lacks the tool, so a follower that re-discovered with a fresh process would miss it: the
 * catalog must take the list from the connection that announced the change, under the same
 * pinning rules (pending approval). A plain `plugin sync` still re-discovers with a fresh
 * process, which no longer has the tool.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { conformancePluginFolder } from '../helpers/sdk-plugin-folders.ts';
import { openTempDir } from '../plugins/helpers.ts';

/** SDK 1.x server: `count_eggs` exists only once `open_hatch` ran in this process (nothing on disk says so). */
const HEN_HOUSE = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const server = new McpServer({ name: 'hen-house', version: '1.0.0' });
let opened = false;
server.registerTool('open_hatch', { description: 'Open the hatch of the hen house in the morning.' }, async () => {
  if (!opened) {
    opened = true;
    // Registered while connected: the SDK announces notifications/tools/list_changed itself.
    server.registerTool('count_eggs', { description: 'Count the eggs the hens laid in the nest boxes.' }, async () => text('12 eggs'));
  }
  return text('hatch open');
});
await server.connect(new StdioServerTransport());
`;

async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.fail(`timed out waiting until ${what}`);
}

const text = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

describeEachBackend('a tool a running plugin adds at runtime reaches the catalog (issue #24)', (backend) => {
  let home: string;
  let app: App;
  let server: HttpServer;
  let mcpKey: string;
  let pluginId: string;

  async function openHatch(): Promise<void> {
    const client = new Client({ name: 'hen-house-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${mcpKey}` } } }));
    try {
      const result = (await client.callTool({ name: 'call_tool', arguments: { name: 'coop__open_hatch', arguments: {} } }, undefined, { timeout: 120_000 })) as CallToolResult;
      assert.ok(!result.isError, text(result));
      assert.match(text(result), /hatch open/);
    } finally {
      await client.close();
    }
  }

  const catalogNames = async () => (await app.plugins.tools('coop')).map((tool) => tool.name).sort();
  const pids = () => app.supervisor.processes().filter((process) => process.pluginId === pluginId).map((process) => process.pid);

  before(async () => {
    home = await openTempDir('tool-list-follow-runtime');
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db });
    const folder = conformancePluginFolder(join(home, 'coop-src'));
    await writeFile(join(folder, 'server.mjs'), HEN_HOUSE);
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    mcpKey = (await app.apiKeys.create({ name: 'agent', scopes: ['mcp'] })).key;
    await app.plugins.add(folder, { name: 'coop' });
    pluginId = (await app.plugins.show('coop')).plugin.id;
  });
  after(async () => {
    await server?.close();
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('the tool enters the catalog pending approval from the announcing connection; a plain sync re-discovers afresh', async () => {
    // A fresh process (the install's discovery) serves no count_eggs.
    assert.deepEqual(await catalogNames(), ['open_hatch']);

    await openHatch();
    const running = pids();
    assert.equal(running.length, 1);
    await eventually('the runtime tool is in the catalog', async () => (await catalogNames()).includes('count_eggs'));
    // The sync writes the tool and then its pinning verdict: wait for both.
    await eventually('the runtime tool awaits approval', async () => (await app.pinning.quarantined('coop')).length > 0);
    const [pending, ...others] = await app.pinning.quarantined('coop');
    assert.equal(others.length, 0);
    assert.equal(pending!.tool, 'count_eggs');
    assert.equal(pending!.kind, 'new');
    assert.deepEqual(pids(), running, 'the announcing process was not restarted');

    // `plugin sync` starts a fresh process, which has not run open_hatch: the tool is retired.
    const report = await app.plugins.sync('coop');
    assert.deepEqual(report.tools.deleted, ['count_eggs']);
    assert.deepEqual(await catalogNames(), ['open_hatch']);
  });
});
