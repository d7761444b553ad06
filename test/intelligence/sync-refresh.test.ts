/**
 * A plugin sync regenerates its generated intelligence document (issue #14), through the app as
 * wired from configuration: a real stdio plugin is installed, its document generated, then the
 * server's tool descriptions change and `plugins.sync` re-discovers them; the installation
 * change regenerates the document in the background from the sources used before, only
 * discovery recomputed, and the new description is in it.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { createPinningPluginFolder, ORIGINAL_TOOLS, serveTools } from '../trust/pinning-fixture.ts';
import { createCapturingLogger } from '../runtime/helpers.ts';

type Tool = Record<string, any>;

describeEachBackend('PID regeneration on plugin sync', (backend) => {
  let home: string;
  let app: App;
  let folder: string;

  before(async () => {
    home = await openTempDir('pid-sync');
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db: await backend.open() });
    folder = await createPinningPluginFolder(home, 'weather-src');
    await app.plugins.add(folder, { name: 'weather' });
  });
  after(async () => {
    await app.close();
    await rm(home, { recursive: true, force: true });
  });

  it('regenerates from the sources used before, in the background, after a sync', async () => {
    const first = await app.pidGeneration.generate('weather', { from: ['mcp'] });
    assert.equal(first.stored, true);
    // Tool pinning would quarantine a changed definition; approve it so the catalog takes the new text.
    const changed = ORIGINAL_TOOLS.map((tool, index) => (index === 0 ? { ...tool, description: `${tool.description} Also gives the UV index.` } : tool));
    await serveTools(folder, changed);
    await app.plugins.sync('weather');
    await app.pinning.approve('weather', [ORIGINAL_TOOLS[0]!.name], 'test');
    await app.plugins.sync('weather');
    // The regeneration runs in the background after the sync commits.
    let record = await app.pidGeneration.get('weather');
    for (let wait = 0; wait < 150 && !JSON.stringify(record.document).includes('UV index'); wait++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      record = await app.pidGeneration.get('weather');
    }
    const tool = (record.document['tools'] as Tool[]).find((entry) => entry['name'] === ORIGINAL_TOOLS[0]!.name)!;
    assert.match(tool['description'], /UV index/);
    assert.deepEqual(Object.keys(record.inputHashes).sort(), ['mcp']);
    assert.equal((await app.pidGeneration.status('weather')).stale, false);
  });

  it('waits on close for a regeneration under way instead of closing the database under it', async () => {
    // A command that syncs and exits (`quiver plugin update`) closes the app right after the sync.
    const logger = createCapturingLogger();
    const shortHome = await openTempDir('pid-sync-close');
    const shortApp = await createApp(loadConfig({ QUIVER_HOME: shortHome, QUIVER_DATABASE_URL: 'memory://', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db: await backend.open(), logger });
    try {
      const source = await createPinningPluginFolder(shortHome, 'weather-src');
      await shortApp.plugins.add(source, { name: 'weather' });
      await shortApp.pidGeneration.generate('weather', { from: ['mcp'] });
      await serveTools(source, ORIGINAL_TOOLS.map((tool, index) => (index === 0 ? { ...tool, description: `${tool.description} Also gives the UV index.` } : tool)));
      await shortApp.plugins.sync('weather');
      await shortApp.pinning.approve('weather', [ORIGINAL_TOOLS[0]!.name], 'test');
      await shortApp.plugins.sync('weather');
    } finally {
      await shortApp.close();
    }
    // Long enough for a regeneration cut off by the close to fail and say so.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await rm(shortHome, { recursive: true, force: true });
    const failures = logger.lines.filter((line) => line.includes('regenerating the intelligence document failed'));
    assert.deepEqual(failures, []);
  });
});
