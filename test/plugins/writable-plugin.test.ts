/**
 * Plugins write where they expect to (issue #15): the real @modelcontextprotocol/server-memory
 * from npm, installed with no settings at all, keeps its graph in `memory.jsonl` beside its own
 * code. In the real bubblewrap sandbox its folder appears writable through an overlay whose
 * writes land in the plugin's state folder: the graph survives closing Quiver and starting it
 * again on the same home, and the shared install cache is byte-for-byte unchanged.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createCatalogService } from '../../src/catalog/index.ts';
import { createPluginService, type PluginService } from '../../src/plugins/service.ts';
import { createSecretBox } from '../../src/plugins/secret-box.ts';
import { overlayFolderName } from '../../src/runtime/code-overlay.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { createSupervisor, type Supervisor } from '../../src/runtime/supervisor.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { skipUnless } from '../helpers/requirements.ts';
import { openTempDir, repoRoot } from './helpers.ts';

const INSTALL_TIMEOUT = 300_000;
const host = detectHost();
// A host without them skips on a developer machine and fails under CI, naming what it lacks (issue #28: it skipped silently).
const skip = skipUnless(host.bubblewrap === undefined ? `bubblewrap is not usable here: ${host.bubblewrapProblem}` : host.overlay === undefined ? `no code overlay here: ${host.overlayProblem}` : false);
// The version the repository pins as a devDependency, so npm's cache already holds it.
const memoryVersion = (JSON.parse(readFileSync(join(repoRoot, 'node_modules/@modelcontextprotocol/server-memory/package.json'), 'utf8')) as { version: string }).version;
const npmCacheDir = process.env.QUIVER_TEST_NPM_CACHE;

/** Every file, folder and link under `root` with its content hash, mode and owner: any change shows. */
function snapshot(root: string): string[] {
  const entries: string[] = [];
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const stat = lstatSync(path);
      const meta = `${path.slice(root.length)} ${stat.mode.toString(8)} ${stat.uid}:${stat.gid}`;
      if (stat.isSymbolicLink()) entries.push(`${meta} -> ${readlinkSync(path)}`);
      else if (stat.isDirectory()) {
        entries.push(`${meta}/`);
        walk(path);
      } else entries.push(`${meta} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    }
  };
  walk(root);
  return entries;
}

/** One "run of Quiver": a catalog, a supervisor and the plugins service over a home that outlives it. */
function start(db: Database, home: { cacheDir: string; stateRoot: string; key: Buffer }): { plugins: PluginService; supervisor: Supervisor } {
  const supervisor = createSupervisor({ startTimeoutMs: 20_000, stopGraceMs: 200, sandbox: { stateRoot: home.stateRoot } });
  const plugins = createPluginService({
    // The machine's environment for git and npm, as the app hands over config.commandEnv.
    commandEnv: process.env,
    db,
    catalog: createCatalogService({ db }),
    supervisor,
    cacheDir: home.cacheDir,
    stateRoot: home.stateRoot,
    secrets: createSecretBox(home.key),
    discoveryTimeoutMs: 60_000,
    npmTimeoutMs: INSTALL_TIMEOUT,
    ...(npmCacheDir === undefined ? {} : { npmCacheDir }),
  });
  return { plugins, supervisor };
}

function text(result: { content: unknown }): string {
  return (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
}

describeEachBackend('a sandboxed plugin writes beside its code (server-memory, zero configuration)', (backend) => {
  let db: Database;
  let root: string;

  before(async () => {
    db = await backend.open();
    root = await openTempDir('writable');
  });
  after(async () => {
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('remembers entities across a restart of Quiver; the install cache never changes', { skip, timeout: INSTALL_TIMEOUT }, async () => {
    const home = { cacheDir: join(root, 'plugins'), stateRoot: join(root, 'state'), key: randomBytes(32) };
    const entity = `Quiver-${randomBytes(4).toString('hex')}`;

    const first = start(db, home);
    let cachePath: string;
    let before: string[];
    let stateDir: string;
    try {
      const report = await first.plugins.add(`npm:@modelcontextprotocol/server-memory@${memoryVersion}`);
      assert.equal(report.plugin.name, 'server-memory');
      assert.equal(report.plugin.trustLevel ?? 'UNVERIFIED', 'UNVERIFIED', 'installed with the default, sandboxed trust level');
      cachePath = report.plugin.source['cachePath'] as string;
      before = snapshot(cachePath);

      const details = await first.plugins.show('server-memory');
      assert.deepEqual(details.env, [], 'no setting of any kind');
      assert.deepEqual(details.secrets, [], 'no secret of any kind');
      stateDir = details.stateDir!;
      assert.equal(stateDir, join(home.stateRoot, details.plugin.id));

      const spec = await first.plugins.upstreamSpec('server-memory');
      const created = await first.supervisor.callTool(spec, 'create_entities', {
        entities: [{ name: entity, entityType: 'project', observations: ['an MCP plugin hub', 'written through the overlay'] }],
      });
      assert.notEqual(created.isError, true, text(created));
      const graph = await first.supervisor.callTool(spec, 'read_graph', {});
      assert.match(text(graph), new RegExp(entity));
      const launch = first.supervisor.health().find((entry) => entry.pluginId === details.plugin.id)?.launch;
      assert.equal(launch?.sandboxed, true);
      assert.equal(launch?.codeFolder, 'overlay');
    } finally {
      await first.supervisor.close();
    }

    // The write landed in the plugin's state folder, at the path it has in the package…
    const written = join(stateDir, overlayFolderName, 'upper', 'node_modules/@modelcontextprotocol/server-memory/dist/memory.jsonl');
    assert.ok(existsSync(written), `${written} exists`);
    assert.match(readFileSync(written, 'utf8'), new RegExp(entity));
    // …and nowhere in the shared cache.
    assert.equal(existsSync(join(cachePath, 'node_modules/@modelcontextprotocol/server-memory/dist/memory.jsonl')), false);
    assert.deepEqual(snapshot(cachePath), before, 'the install cache is unchanged');

    const second = start(db, home);
    try {
      const spec = await second.plugins.upstreamSpec('server-memory');
      const graph = await second.supervisor.callTool(spec, 'read_graph', {});
      assert.match(text(graph), new RegExp(entity), 'the memory survived the restart');
      assert.match(text(graph), /written through the overlay/);
      const found = await second.supervisor.callTool(spec, 'search_nodes', { query: entity });
      assert.match(text(found), new RegExp(entity));
    } finally {
      await second.supervisor.close();
    }
    assert.deepEqual(snapshot(cachePath), before, 'the install cache is still unchanged');
  });
});
