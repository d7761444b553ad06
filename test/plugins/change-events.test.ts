/**
 * Cache invalidation that cannot be forgotten (issue #17): every method of the plugins service
 * is classified below — a new method breaks the type check until it is — and each write that
 * changes installation, status, enablement, exposure, secrets or settings must emit exactly one
 * `onChange` event once it has committed; reads, failed writes and writes no cache depends on
 * emit none. Then the app's wiring: a plugin change reaches the selection engine and NOTIFY.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { CATALOG_CHANGED_CHANNEL } from '../../src/selection/invalidation.ts';
import type { PluginChangeEvent, PluginChangeKind, PluginService } from '../../src/plugins/service.ts';
import { createCapturingLogger, createHarness, createPluginFolder, openTempDir, type PluginsHarness } from './helpers.ts';

/** The writes the caches depend on, with the kind each one reports. */
const CACHE_WRITES = {
  add: 'installation',
  update: 'installation',
  sync: 'installation',
  commitStagedVersion: 'installation',
  remove: 'installation',
  setStatus: 'status',
  enable: 'enablement',
  disable: 'enablement',
  setWorkspaceExposureMode: 'exposure',
  setWorkspaceNativeNames: 'exposure',
  setSecret: 'secrets',
  deleteSecret: 'secrets',
  setEnv: 'settings',
  unsetEnv: 'settings',
  grantMount: 'mounts',
  revokeMount: 'mounts',
} as const satisfies Partial<Record<keyof PluginService, PluginChangeKind>>;

/** Writes no cache reads (new empty scopes, intelligence documents, the marketplace catalog). */
const OTHER_WRITES = ['createWorkspace', 'createProject', 'generateIntelligence', 'putIntelligence', 'intelligenceStored', 'importMarketplace', 'stageVersion'] as const;

/** Methods that write nothing. */
const READS = [
  'list', 'show', 'tools', 'effectiveTools', 'listEnv', 'resolveLaunchEnv', 'upstreamSpec', 'listWorkspaces', 'workspaceExposureModes', 'workspaceNativeNames',
  'listProjects', 'getIntelligence', 'exportIntelligence', 'searchIntelligence', 'listMarketplace', 'searchMarketplace', 'listMounts',
] as const;

type Classified = keyof typeof CACHE_WRITES | (typeof OTHER_WRITES)[number] | (typeof READS)[number];
// A method added to PluginService and not classified above makes this line a type error.
const everyMethodClassified: Exclude<keyof PluginService, Classified> extends never ? true : never = true;

describeEachBackend('plugin service change events', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let root: string;
  let folder: string;
  const events: PluginChangeEvent[] = [];
  const logger = createCapturingLogger();
  let throwing = false;

  /** Runs one call and returns the events it emitted. */
  async function eventsOf(call: () => Promise<unknown>): Promise<PluginChangeEvent[]> {
    events.length = 0;
    await call();
    return [...events];
  }

  before(async () => {
    db = await backend.open();
    root = await openTempDir('change-events');
    folder = await createPluginFolder(root, 'calc', 'calc');
    harness = await createHarness(db, {
      logger,
      extra: {
        onChange: (event) => {
          events.push(event);
          if (throwing) throw new Error('subscriber failed');
        },
      },
    });
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('classifies every method of the service exactly once', () => {
    assert.equal(everyMethodClassified, true);
    const classified = [...Object.keys(CACHE_WRITES), ...OTHER_WRITES, ...READS];
    assert.equal(new Set(classified).size, classified.length, 'a method is classified twice');
    assert.deepEqual(Object.keys(harness.plugins).sort(), classified.sort());
  });

  it('emits one event of the right kind after each write the caches depend on', async () => {
    const plugins = harness.plugins;
    const calls: { [K in keyof typeof CACHE_WRITES]: () => Promise<unknown> } = {
      add: () => plugins.add(folder, { name: 'calc' }),
      setStatus: () => plugins.setStatus('calc', 'disabled'),
      enable: () => plugins.enable('calc', { workspace: 'default' }),
      disable: () => plugins.disable('calc'),
      setWorkspaceExposureMode: () => plugins.setWorkspaceExposureMode('default', 'all'),
      setWorkspaceNativeNames: () => plugins.setWorkspaceNativeNames('default', true),
      setSecret: () => plugins.setSecret('calc', 'FIXTURE_TOKEN', 'token-value'),
      deleteSecret: () => plugins.deleteSecret('calc', 'FIXTURE_TOKEN'),
      setEnv: () => plugins.setEnv('calc', 'CALC_MODE', 'fast'),
      unsetEnv: () => plugins.unsetEnv('calc', 'CALC_MODE'),
      // Issue #26: a host-path grant and its withdrawal change how the plugin starts.
      grantMount: () => plugins.grantMount('calc', { path: root, mode: 'ro', actor: 'test' }),
      revokeMount: () => plugins.revokeMount('calc', root),
      sync: () => plugins.sync('calc'),
      update: () => plugins.update('calc'),
      // Issue #11: staging writes nothing the caches read; committing the staged version is an installation.
      commitStagedVersion: async () => plugins.commitStagedVersion('calc', await plugins.stageVersion('calc')),
      remove: () => plugins.remove('calc'),
    };
    // Object order is the call order: add first, remove last.
    let pluginId: string | undefined;
    for (const [method, call] of Object.entries(calls) as Array<[keyof typeof CACHE_WRITES, () => Promise<unknown>]>) {
      const emitted = await eventsOf(call);
      pluginId ??= (await plugins.list({ includeRemoved: true })).find((plugin) => plugin.name === 'calc')?.id;
      assert.equal(emitted.length, 1, `${method} emitted ${emitted.length} events`);
      assert.equal(emitted[0]!.kind, CACHE_WRITES[method], `${method} emitted '${emitted[0]!.kind}'`);
      if (method === 'setWorkspaceExposureMode' || method === 'setWorkspaceNativeNames') assert.equal(emitted[0]!.workspace, 'default');
      else assert.equal(emitted[0]!.pluginId, pluginId, `${method} names the plugin`);
    }
  });

  it('emits nothing for reads, for writes no cache reads, and for writes that fail or change nothing', async () => {
    const plugins = harness.plugins;
    await eventsOf(() => plugins.add(folder, { name: 'calc2' }));
    const quiet: Array<[string, () => Promise<unknown>]> = [
      ['list', () => plugins.list()],
      ['show', () => plugins.show('calc2')],
      ['tools', () => plugins.tools('calc2')],
      ['effectiveTools', () => plugins.effectiveTools()],
      ['listEnv', () => plugins.listEnv('calc2')],
      ['resolveLaunchEnv', () => plugins.resolveLaunchEnv('calc2')],
      ['upstreamSpec', () => plugins.upstreamSpec('calc2')],
      ['listWorkspaces', () => plugins.listWorkspaces()],
      ['workspaceExposureModes', () => plugins.workspaceExposureModes()],
      ['workspaceNativeNames', () => plugins.workspaceNativeNames()],
      ['createWorkspace', () => plugins.createWorkspace({ name: 'quiet' })],
      ['createProject', () => plugins.createProject('quiet', { name: 'p1' })],
      ['listProjects', () => plugins.listProjects('quiet')],
      ['generateIntelligence', () => plugins.generateIntelligence('calc2')],
      ['putIntelligence', async () => plugins.putIntelligence('calc2', (await plugins.getIntelligence('calc2')).pid)],
      ['exportIntelligence', () => plugins.exportIntelligence()],
      // Stored elsewhere with the same execution profile: nothing to rebuild.
      ['intelligenceStored', async () => plugins.intelligenceStored('calc2', await plugins.getIntelligence('calc2'))],
      ['searchIntelligence', () => plugins.searchIntelligence('add numbers')],
      ['importMarketplace', () => plugins.importMarketplace({ servers: [] })],
      ['listMarketplace', () => plugins.listMarketplace()],
      ['searchMarketplace', () => plugins.searchMarketplace('memory')],
      // Nothing to delete: nothing changed.
      ['deleteSecret', async () => assert.equal(await plugins.deleteSecret('calc2', 'NOT_SET'), false)],
      ['unsetEnv', async () => assert.equal(await plugins.unsetEnv('calc2', 'NOT_SET'), false)],
      ['listMounts', () => plugins.listMounts('calc2')],
      ['revokeMount', async () => assert.equal(await plugins.revokeMount('calc2', '/nowhere/granted'), false)],
    ];
    for (const [method, call] of quiet) assert.deepEqual(await eventsOf(call), [], `${method} emitted an event`);

    // An accepted generation whose execution profile differs from the document it replaced:
    // cached launch specs must be rebuilt, as after a PUT (issue #14, `quiver pid accept`).
    const current = await plugins.getIntelligence('calc2');
    const replaced = { ...current, pid: { ...current.pid, execution: { timeoutRecommendation: 1_234 } } };
    const stored = await eventsOf(() => plugins.intelligenceStored('calc2', replaced));
    assert.deepEqual(stored.map((event) => event.kind), ['settings'], 'a changed execution profile rebuilds launch specs');

    const refused = (code: string) => (error: unknown) => isQuiverError(error, code);
    const failing: Array<[string, () => Promise<unknown>, (error: unknown) => boolean]> = [
      ['enable', () => plugins.enable('missing'), refused('not_found')],
      ['disable', () => plugins.disable('calc2', { workspace: 'nowhere' }), refused('not_found')],
      ['setStatus', () => plugins.setStatus('missing', 'disabled'), refused('not_found')],
      ['setWorkspaceExposureMode', () => plugins.setWorkspaceExposureMode('nowhere', 'all'), refused('not_found')],
      ['setWorkspaceNativeNames', () => plugins.setWorkspaceNativeNames('nowhere', true), refused('not_found')],
      ['setSecret', () => plugins.setSecret('calc2', 'bad key', 'x'), refused('invalid_input')],
      ['setEnv', () => plugins.setEnv('calc2', 'LD_PRELOAD', '/tmp/x.so'), refused('invalid_input')],
      // Issue #26: the hub's own plugin cache is never granted.
      ['grantMount', () => plugins.grantMount('calc2', { path: harness.cacheDir, mode: 'ro', actor: 'test' }), refused('invalid_input')],
      ['add', () => plugins.add(folder, { name: 'calc2' }), refused('conflict')],
      ['add', async () => plugins.add(await createPluginFolder(root, 'bad-manifest', 'broken'), { name: 'broken' }), refused('install_failed')],
      ['update', () => plugins.update('calc2', { ref: 'main' }), refused('invalid_input')],
      ['remove', () => plugins.remove('missing'), refused('not_found')],
    ];
    for (const [method, call, check] of failing) {
      events.length = 0;
      await assert.rejects(call(), check, `${method} should fail`);
      assert.deepEqual(events, [], `a failed ${method} emitted an event`);
    }
  });

  it('keeps a committed write when the subscriber throws, and logs it', async () => {
    throwing = true;
    try {
      const emitted = await eventsOf(() => harness.plugins.setEnv('calc2', 'CALC_MODE', 'slow'));
      assert.equal(emitted.length, 1);
    } finally {
      throwing = false;
    }
    assert.deepEqual((await harness.plugins.listEnv('calc2')).map((row) => [row.key, row.value]), [['CALC_MODE', 'slow']]);
    assert.ok(logger.lines.some((line) => line.includes('plugins onChange subscriber threw')));
  });
});

describeEachBackend('the app wires plugin changes to the selection caches', (backend) => {
  let db: Database;
  let app: App;
  let home: string;

  before(async () => {
    db = await backend.open();
    home = await openTempDir('change-events-app');
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
  });
  after(async () => {
    await app.close();
    await rm(home, { recursive: true, force: true });
  });

  it('a plugin change is announced on the catalog channel as an enablement change', async () => {
    const received = new EventEmitter();
    const unlisten = await db.listen(CATALOG_CHANGED_CHANNEL, (payload) => received.emit('change', payload));
    try {
      const notified = once(received, 'change');
      await app.plugins.setWorkspaceExposureMode('default', 'capabilities');
      const [payload] = (await notified) as [string];
      assert.deepEqual(JSON.parse(payload), { kind: 'enablement' });
    } finally {
      await unlisten();
    }
  });
});
