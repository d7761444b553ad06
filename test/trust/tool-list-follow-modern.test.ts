/**
 * Issue #24: the catalog follows a 2026-07-28 plugin's tool-list changes. Such a plugin sends no
 * unsolicited notifications: Quiver's runtime opens a `subscriptions/listen` stream toward it
 * when it declares `tools.listChanged`, else reads its list again when the list's `ttlMs` says
 * it went stale; either change takes the same path as a 2025
 * plugin's `notifications/tools/list_changed` (composition/tool-list-follower: sync under the
 * pinning rules). A real plugin on the v2 SDK (`@modelcontextprotocol/server`, 2025 era refused)
 * grows a tool at runtime once the test marks `garden.json` grown and a call pokes it;
 * without any `plugin sync`, the new tool enters the catalog pending approval and the process
 * that announced it keeps running.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { modernPluginFolder } from '../helpers/sdk-plugin-folders.ts';
import { openTempDir } from '../plugins/helpers.ts';

/**
 * A 2026-only plugin whose `harvest_crop` tool appears once garden.json says grown (read at start
 * and on each call). `listChanged`: it announces the change on subscriptions/listen; without it,
 * its tools/list says it stays fresh 1 s (ttlMs), so Quiver reads it again when stale.
 */
const growingServer = (listChanged: boolean): string => `import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

// Rewritten in place by the test (a file created after the start may stay unseen through the sandbox's code overlay).
const grownFile = new URL('./garden.json', import.meta.url);
const text = (value) => ({ content: [{ type: 'text', text: value }] });

function createServer() {
  const server = new McpServer({ name: 'garden', version: '1.0.0' }, ${listChanged ? "{ capabilities: { tools: { listChanged: true } } }" : "{ capabilities: { tools: {} }, cacheHints: { 'tools/list': { ttlMs: 1000, cacheScope: 'public' } } }"});
  let grown = false;
  const grow = () => {
    if (grown || !JSON.parse(readFileSync(grownFile, 'utf8')).grown) return;
    grown = true;
    server.registerTool('harvest_crop', { description: 'Harvest the crop that grew from a planted seed.' }, async () => text('harvested'));
  };
  grow();
  server.registerTool('plant_seed', { description: 'Plant a seed in the garden bed.' }, async () => {
    grow();
    return text('planted');
  });
  return server;
}

serveStdio(createServer, { legacy: 'reject' });
`;

async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.fail(`timed out waiting until ${what}`);
}

for (const listChanged of [true, false]) {
describeEachBackend(`the catalog follows a 2026-07-28 plugin's tool-list changes ${listChanged ? 'through subscriptions/listen' : 'by polling at its ttlMs'} (issue #24)`, (backend) => {
  let home: string;
  let folder: string;
  let app: App;
  let server: HttpServer;
  let mcpKey: string;
  let pluginId: string;

  async function plantSeed(): Promise<void> {
    const client = new ModernClient({ name: 'garden-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernHttpTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${mcpKey}` } } }));
    try {
      const result = (await client.callTool({ name: 'call_tool', arguments: { name: 'garden__plant_seed', arguments: {} } }, { timeout: 120_000 })) as { content: Array<{ text?: string }>; isError?: boolean };
      assert.ok(!result.isError, JSON.stringify(result));
      assert.equal(result.content[0]?.text, 'planted');
    } finally {
      await client.close();
    }
  }

  const catalogNames = async () => (await app.plugins.tools('garden')).map((tool) => tool.name).sort();
  const pids = () => app.supervisor.processes().filter((process) => process.pluginId === pluginId).map((process) => process.pid);

  before(async () => {
    home = await openTempDir('tool-list-follow-modern');
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db });
    folder = modernPluginFolder(join(home, 'garden-src'));
    await writeFile(join(folder, 'server.mjs'), growingServer(listChanged));
    await writeFile(join(folder, 'garden.json'), '{ "grown": false }\n');
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    mcpKey = (await app.apiKeys.create({ name: 'agent', scopes: ['mcp'] })).key;
    await app.plugins.add(folder, { name: 'garden' });
    pluginId = (await app.plugins.show('garden')).plugin.id;
  });
  after(async () => {
    await server?.close();
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('a tool the running 2026 plugin adds enters the catalog pending approval; the process keeps running', async () => {
    await plantSeed();
    const running = pids();
    assert.equal(running.length, 1);
    assert.deepEqual(await catalogNames(), ['plant_seed']);

    await writeFile(join(folder, 'garden.json'), '{ "grown": true }\n');
    await plantSeed();
    await eventually('the grown tool is in the catalog', async () => (await catalogNames()).includes('harvest_crop'));
    // The sync writes the tool and then its pinning verdict: wait for both.
    await eventually('the grown tool awaits approval', async () => (await app.pinning.quarantined('garden')).length > 0);
    const [pending, ...others] = await app.pinning.quarantined('garden');
    assert.equal(others.length, 0);
    assert.equal(pending!.tool, 'harvest_crop');
    assert.equal(pending!.kind, 'new');
    assert.deepEqual(pids(), running, 'the announcing process was not restarted');
  });
});
}
