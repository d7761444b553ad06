/**
 * Issue #24: the catalog follows a running plugin's `notifications/tools/list_changed`. A real
 * plugin process (the pinning fixture, live: it re-reads tools.json on each call and announces a
 * change) adds a tool and later drops one; without any `plugin sync`, the new tool enters the
 * catalog under the pinning rules (pending approval: quarantined as new, hidden from selection
 * until approved) and the dropped one leaves the catalog and selection. The announcing process
 * keeps running.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { createPinningPluginFolder, goLive, ORIGINAL_TOOLS, serveTools, type FixtureTool } from './pinning-fixture.ts';

const FORECAST: FixtureTool = {
  name: 'tide_forecast',
  description: 'Tide tables and high water times for a harbour.',
  inputSchema: { type: 'object', properties: { harbour: { type: 'string' } }, required: ['harbour'] },
};

const text = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

/** Polls until `check` holds (generous: the follower debounces and re-discovers on a loaded machine). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.fail(`timed out waiting until ${what}`);
}

describeEachBackend('the catalog follows a running plugin\'s tools/list_changed (issue #24)', (backend) => {
  let home: string;
  let folder: string;
  let app: App;
  let server: HttpServer;
  let mcpKey: string;
  let pluginId: string;

  async function mcpClient(): Promise<Client> {
    const client = new Client({ name: 'follow-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${mcpKey}` } } }));
    return client;
  }

  /** Calls convert_units through the gateway: the live plugin re-reads its tools and announces a change. */
  async function poke(): Promise<void> {
    const client = await mcpClient();
    try {
      await client.callTool({ name: 'search_tools', arguments: { query: 'convert metric imperial units', limit: 5 } });
      const converted = (await client.callTool({ name: 'weather__convert_units', arguments: { value: 1, from: 'm', to: 'ft' } })) as CallToolResult;
      assert.ok(!converted.isError, text(converted));
    } finally {
      await client.close();
    }
  }

  const selected = async (query: string) =>
    (await app.selection.selectTools({ query, k: 10, provider: 'mcp', log: false, context: {} })).tools.map((tool) => tool.qualifiedName);
  const catalogNames = async () => (await app.plugins.tools('weather')).map((tool) => tool.name).sort();
  const pids = () => app.supervisor.processes().filter((process) => process.pluginId === pluginId).map((process) => process.pid);

  before(async () => {
    home = await openTempDir('tool-list-follow');
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db });
    folder = await createPinningPluginFolder(home, 'weather-src');
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    mcpKey = (await app.apiKeys.create({ name: 'agent', scopes: ['mcp'] })).key;
    await app.plugins.add(folder, { name: 'weather' });
    pluginId = (await app.plugins.show('weather')).plugin.id;
    await goLive(folder);
  });
  after(async () => {
    await server?.close();
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('a tool the running plugin adds enters the catalog pending approval, then is selected once approved', async () => {
    await poke();
    const running = pids();
    assert.equal(running.length, 1);
    assert.deepEqual(await catalogNames(), ['convert_units', 'lookup_weather']);

    await serveTools(folder, [...ORIGINAL_TOOLS, FORECAST]);
    await poke();
    await eventually('the new tool is in the catalog', async () => (await catalogNames()).includes('tide_forecast'));
    const [pending, ...others] = await app.pinning.quarantined('weather');
    assert.equal(others.length, 0);
    assert.equal(pending!.tool, 'tide_forecast');
    assert.equal(pending!.kind, 'new');
    assert.ok(!(await selected('tide tables high water harbour')).includes('weather__tide_forecast'));

    await app.pinning.approve('weather', ['tide_forecast'], 'test');
    assert.ok((await selected('tide tables high water harbour')).includes('weather__tide_forecast'));
    // The process that announced the change was not restarted by the sync.
    assert.deepEqual(pids(), running);
  });

  it('a tool the running plugin drops leaves the catalog and selection', async () => {
    assert.ok((await selected('weather forecast for a city')).includes('weather__lookup_weather'));
    const running = pids();
    await serveTools(folder, [ORIGINAL_TOOLS[1]!, FORECAST]);
    await poke();
    await eventually('the dropped tool left the catalog', async () => !(await catalogNames()).includes('lookup_weather'));
    assert.deepEqual(await catalogNames(), ['convert_units', 'tide_forecast']);
    assert.ok(!(await selected('weather forecast for a city')).includes('weather__lookup_weather'));
    assert.deepEqual(await app.pinning.quarantined('weather'), []);
    assert.deepEqual(pids(), running);
  });
});
