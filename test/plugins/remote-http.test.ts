/**
 * A remote MCP server over Streamable HTTP on loopback (the SDK's McpServer and
 * StreamableHTTPServerTransport, behind a bearer token): installed by URL with the header
 * stored as an encrypted credential, and by a marketplace `remotes` entry.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { startStatelessMcpServer, type StatelessMcpServer } from '../helpers/stateless-mcp-server.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import { createCapturingLogger, createHarness, type PluginsHarness } from './helpers.ts';

const TOKEN = `remote-${randomBytes(12).toString('hex')}`;

/** A stateless Streamable HTTP MCP server with two weather tools, bearer token required. */
function startRemote(): Promise<StatelessMcpServer> {
  return startStatelessMcpServer({
    name: 'weather-remote',
    version: '2.1.0',
    token: TOKEN,
    register(server) {
      server.registerTool(
        'get_forecast',
        { description: 'Weather forecast for a city for the next days.', inputSchema: { city: z.string(), days: z.number().int().min(1).max(7) } },
        async ({ city, days }) => ({ content: [{ type: 'text', text: `${city}: sunny for ${days} days` }] }),
      );
      server.registerTool(
        'get_current_weather',
        { description: 'Current temperature and wind in a city.', inputSchema: { city: z.string() } },
        async ({ city }) => ({ content: [{ type: 'text', text: `${city}: 21 C` }] }),
      );
    },
  });
}

describeEachBackend('remote MCP plugins over Streamable HTTP', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let remote: Awaited<ReturnType<typeof startRemote>>;
  const logger = createCapturingLogger();

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db, { logger, discoveryTimeoutMs: 10_000 });
    remote = await startRemote();
  });
  after(async () => {
    await harness.close();
    await db.close();
    await remote.close();
  });

  it('fails at discovery without the header and leaves nothing', async () => {
    await assert.rejects(harness.plugins.add(remote.url, { name: 'weather' }), (error: Error) => {
      assert.ok(isQuiverError(error, 'install_failed'));
      assert.equal((error.details as { step: string }).step, 'discovery');
      return true;
    });
    assert.equal((await db.query("SELECT 1 FROM plugins WHERE name = 'weather'")).rows.length, 0);
  });

  it('installs by URL with the Authorization header stored encrypted, and calls a tool through it', async () => {
    const report = await harness.plugins.add(remote.url, { name: 'weather', headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(report.plugin.sourceType, 'url');
    assert.deepEqual(report.plugin.launch, { transport: 'http', url: remote.url });
    assert.equal(report.plugin.version, 'remote');
    assert.deepEqual(report.tools.inserted.sort(), ['get_current_weather', 'get_forecast']);
    assert.deepEqual(report.plugin.credentials, [{ name: 'AUTHORIZATION', required: true, as: 'header', header: 'Authorization', set: true }]);
    assert.ok(!JSON.stringify(report).includes(TOKEN));
    assert.ok(!JSON.stringify(await db.query('SELECT * FROM plugin_secrets')).includes(TOKEN));
    assert.ok(!logger.lines.join('\n').includes(TOKEN));

    const spec = await harness.plugins.upstreamSpec('weather');
    assert.equal(spec.transport, 'http');
    const result = await harness.supervisor.callTool(spec, 'get_forecast', { city: 'Berlin', days: 3 });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Berlin: sunny for 3 days' }]);
    const parameters = (await harness.plugins.tools('weather')).find((tool) => tool.name === 'get_forecast')!.parameters;
    assert.deepEqual(Object.keys(parameters['properties'] as object).sort(), ['city', 'days']);
  });

  it('installs from a marketplace entry that offers a streamable-http remote', async () => {
    await harness.plugins.importMarketplace([
      {
        name: 'io.github.example/weather',
        description: 'Forecasts and current conditions for any city.',
        version: '2.1.0',
        remotes: [{ type: 'streamable-http', url: remote.url, headers: [{ name: 'Authorization', isRequired: true, isSecret: true, description: 'Bearer token' }] }],
      },
      { name: 'not a valid name', description: 'skipped' },
    ]);
    await assert.rejects(harness.plugins.add('market:io.github.example/weather', { name: 'weather-market' }), (error: Error) =>
      isQuiverError(error, 'install_failed') && /AUTHORIZATION/.test(error.message),
    );
    const report = await harness.plugins.add('market:io.github.example/weather', { name: 'weather-market', headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(report.plugin.source['marketplace'], 'io.github.example/weather');
    assert.equal(report.tools.total, 2);
    // Sync re-discovers over HTTP with the stored header.
    const synced = await harness.plugins.sync('weather-market');
    assert.equal(synced.tools.unchanged, 2);
  });
});
