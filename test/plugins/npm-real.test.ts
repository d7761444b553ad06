/**
 * Real MCP servers from the npm registry (needs registry access, as CI has): server-everything
 * and server-filesystem by `npm:<package>`, server-memory through a marketplace entry in the
 * MCP Registry server.json format. Each is installed once per backend (npm's cache is shared),
 * discovered in the sandbox, and its tool list in the catalog is compared with what a plain
 * MCP client, started outside Quiver on the installed files, lists.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { createHarness, type PluginsHarness } from './helpers.ts';
import { UPSTREAM_CLIENT_CAPABILITIES } from '../../src/runtime/upstream-connection.ts';

const npmCacheDir = process.env.QUIVER_TEST_NPM_CACHE;
const INSTALL_TIMEOUT = 300_000;

/** Lists a server's tools with a bare SDK client, unsandboxed, from its installed folder. */
async function listDirectly(spec: { command: string; args: string[]; cwd?: string | undefined }): Promise<string[]> {
  // Declares what Quiver's own client declares: server-everything lists its sampling, elicitation
  // and roots tools only to clients that offer those (issue #12 forwarding).
  const client = new Client({ name: 'quiver-test', version: '0' }, { capabilities: { ...UPSTREAM_CLIENT_CAPABILITIES } });
  await client.connect(new StdioClientTransport({ command: spec.command, args: spec.args, ...(spec.cwd ? { cwd: spec.cwd } : {}), stderr: 'ignore' }));
  try {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
    } while (cursor);
    return names.sort();
  } finally {
    await client.close();
  }
}

describeEachBackend('real npm MCP servers', (backend) => {
  let db: Database;
  let harness: PluginsHarness;

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db, {
      discoveryTimeoutMs: 60_000,
      ...(npmCacheDir === undefined ? {} : { npmCacheDir }),
      extra: { npmTimeoutMs: INSTALL_TIMEOUT },
    });
  });
  after(async () => {
    await harness.close();
    await db.close();
  });

  it('installs @modelcontextprotocol/server-everything and catalogs every tool it lists', { timeout: INSTALL_TIMEOUT }, async () => {
    const report = await harness.plugins.add('npm:@modelcontextprotocol/server-everything');
    assert.equal(report.plugin.name, 'server-everything');
    assert.equal(report.plugin.sourceType, 'npm');
    const cachePath = report.plugin.source['cachePath'] as string;
    assert.equal(cachePath, join(harness.cacheDir, 'npm', `@modelcontextprotocol+server-everything@${String(report.plugin.source['version'])}`));
    assert.ok(existsSync(join(cachePath, 'node_modules/@modelcontextprotocol/server-everything/package.json')));

    const spec = await harness.plugins.upstreamSpec('server-everything');
    assert.equal(spec.transport, 'stdio');
    const direct = await listDirectly(spec.transport === 'stdio' ? spec : { command: '', args: [] });
    const catalogued = (await harness.plugins.tools('server-everything')).map((tool) => tool.name).sort();
    assert.ok(direct.length >= 5, `server-everything lists ${direct.length} tools`);
    assert.deepEqual(catalogued, direct);
    assert.ok(catalogued.includes('echo'));
    const result = await harness.supervisor.callTool(spec, 'echo', { message: 'hello from quiver' });
    assert.match(JSON.stringify(result.content), /hello from quiver/);
    // The catalog, the report and discovery agree.
    assert.equal(report.tools.total, direct.length);
    assert.equal(report.plugin.discovery['tools'], direct.length);
    console.log(`server-everything ${String(report.plugin.source['version'])}: ${direct.length} tools`);
  });

  it('installs @modelcontextprotocol/server-filesystem with an allowed folder passed as --arg', { timeout: INSTALL_TIMEOUT }, async () => {
    // /usr/share is visible read-only inside the sandbox, so the server starts there too.
    const report = await harness.plugins.add('npm:@modelcontextprotocol/server-filesystem', { name: 'files', args: ['/usr/share'] });
    assert.deepEqual((report.plugin.launch as { args: string[] }).args.slice(-1), ['/usr/share']);
    const spec = await harness.plugins.upstreamSpec('files');
    const direct = await listDirectly(spec.transport === 'stdio' ? spec : { command: '', args: [] });
    const catalogued = (await harness.plugins.tools('files')).map((tool) => tool.name).sort();
    assert.ok(direct.length >= 8, `server-filesystem lists ${direct.length} tools`);
    assert.deepEqual(catalogued, direct);
    const allowed = await harness.supervisor.callTool(spec, 'list_allowed_directories', {});
    assert.match(JSON.stringify(allowed.content), /\/usr\/share/);
    console.log(`server-filesystem ${String(report.plugin.source['version'])}: ${direct.length} tools`);
  });

  it('installs @modelcontextprotocol/server-memory from a marketplace entry (server.json)', { timeout: INSTALL_TIMEOUT }, async () => {
    const imported = await harness.plugins.importMarketplace({
      servers: [
        {
          server: {
            $schema: 'https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json',
            name: 'io.github.modelcontextprotocol/server-memory',
            description: 'Knowledge graph memory: entities, relations and observations that persist across chats.',
            version: '0.6.3',
            repository: { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' },
            packages: [
              {
                registryType: 'npm',
                identifier: '@modelcontextprotocol/server-memory',
                transport: { type: 'stdio' },
                environmentVariables: [{ name: 'MEMORY_FILE_PATH', description: 'Where the graph is stored', isRequired: false }],
              },
            ],
          },
          _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active' } },
        },
      ],
    });
    assert.equal(imported.imported, 1);
    const [hit] = await harness.plugins.searchMarketplace('remember facts in a knowledge graph', 5);
    assert.equal(hit?.name, 'io.github.modelcontextprotocol/server-memory');
    assert.equal(hit?.installable, true);

    const report = await harness.plugins.add(hit!.install);
    assert.equal(report.plugin.name, 'server-memory');
    assert.equal(report.plugin.source['marketplace'], 'io.github.modelcontextprotocol/server-memory');
    assert.deepEqual(report.plugin.credentials.map((c) => [c.name, c.required, c.set]), [['MEMORY_FILE_PATH', false, false]]);
    const spec = await harness.plugins.upstreamSpec('server-memory');
    const direct = await listDirectly(spec.transport === 'stdio' ? spec : { command: '', args: [] });
    const catalogued = (await harness.plugins.tools('server-memory')).map((tool) => tool.name).sort();
    assert.deepEqual(catalogued, direct);
    assert.ok(catalogued.includes('create_entities') && catalogued.includes('read_graph'), catalogued.join(', '));
    assert.equal((await harness.plugins.searchMarketplace('knowledge graph memory', 5))[0]?.installedAs, 'server-memory');
    console.log(`server-memory ${String(report.plugin.source['version'])}: ${direct.length} tools`);

    // Every tool of the three servers is in effect in the default workspace.
    const effective = await harness.plugins.effectiveTools();
    assert.equal(new Set(effective.map((tool) => tool.pluginName)).size, 3);
  });

  it('fails cleanly for a package that does not exist', { timeout: INSTALL_TIMEOUT }, async () => {
    await assert.rejects(
      harness.plugins.add('npm:@quiver-test-does-not-exist/no-such-package-3f9a'),
      (error: Error & { code?: string; details?: { step?: string } }) => {
        assert.equal(error.code, 'install_failed');
        assert.equal(error.details?.step, 'npm-install');
        // npm's 404 page of advice is cut to one line that names the package.
        assert.match(error.message, /the registry has no package @quiver-test-does-not-exist\/no-such-package-3f9a \(npm E404, GET https:\/\/\S+\)$/);
        return true;
      },
    );
    assert.equal((await harness.plugins.list()).some((p) => p.name === 'no-such-package-3f9a'), false);
    assert.deepEqual(await readdir(join(harness.cacheDir, '.staging')), [], 'the staging folder is cleaned');
  });
});
