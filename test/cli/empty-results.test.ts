/**
 * Empty results say why they are empty and what to do next (issue #15): an empty catalog, no
 * plugins, a `--plugin` filter naming no plugin (an error, exit 3), filters that match nothing,
 * `select` with nothing visible, an empty marketplace search. The real CLI on a real store,
 * across invocations, on PGlite (a data folder) and on PostgreSQL (a fresh database).
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase, describeEachBackend, type BackendName } from '../helpers/backends.ts';
import { runInProcess } from '../helpers/cli.ts';

/** Store flags for the CLI: a fresh data folder, or a fresh PostgreSQL database. */
async function freshStore(backend: BackendName, folder: string): Promise<{ flags: string[]; drop(): Promise<void> }> {
  if (backend === 'pglite') return { flags: ['--data', join(folder, 'data')], drop: async () => {} };
  const scratch = await createScratchDatabase();
  return { flags: ['--database-url', scratch.url], drop: scratch.drop };
}

describeEachBackend('empty results explain themselves', (backend) => {
  let folder: string;
  let store: { flags: string[]; drop(): Promise<void> };
  const cli = (...argv: string[]) => runInProcess([...argv, ...store.flags]);

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'quiver-empty-'));
    store = await freshStore(backend.name, folder);
  });
  after(async () => {
    await store.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('an empty catalog: tools list, plugin list and select say so and point at plugin add', async () => {
    for (const argv of [['tools', 'list'], ['plugin', 'list'], ['select', 'send an email']]) {
      const { code, stdout, stderr } = await cli(...argv);
      assert.equal(code, 0, `${argv.join(' ')}: ${stderr}`);
      assert.match(stdout, argv[0] === 'plugin' ? /^No plugins installed/ : /catalog is empty/, argv.join(' '));
      assert.match(stdout, /quiver plugin add SOURCE/, argv.join(' '));
      assert.doesNotMatch(stdout, /NAME|TOOL/, `${argv.join(' ')} prints a bare table header`);
    }
    const json = await cli('tools', 'list', '--json');
    assert.equal(json.code, 0);
    assert.equal((JSON.parse(json.stdout) as { total: number }).total, 0, 'JSON output stays data');
  });

  it('a --plugin filter naming no plugin is not found (exit 3), listing the known ones', async () => {
    const none = await cli('tools', 'list', '--plugin', 'nope');
    assert.equal(none.code, 3);
    assert.match(none.stderr, /no plugin named 'nope' \(no plugin is installed\)/);

    writeFileSync(
      join(folder, 'weather.json'),
      JSON.stringify({
        pluginId: 'weather',
        version: '1.0.0',
        tools: [
          { name: 'get_current_weather', description: 'Current weather for a city' },
          { name: 'get_weather_forecast', description: 'Forecast for the next days' },
        ],
      }),
    );
    assert.equal((await cli('sync', join(folder, 'weather.json'))).code, 0);
    const typo = await cli('tools', 'list', '--plugin', 'wether');
    assert.equal(typo.code, 3);
    assert.match(typo.stderr, /no plugin named 'wether' \(known: weather\); 'quiver plugin list'/);
    const asJson = await cli('tools', 'list', '--plugin', 'wether', '--json');
    assert.equal(asJson.code, 3);
    assert.equal((JSON.parse(asJson.stderr.trim()) as { error: { code: string } }).error.code, 'not_found');
    const known = await cli('tools', 'list', '--plugin', 'weather');
    assert.equal(known.code, 0);
    assert.match(known.stdout, /weather__get_current_weather/);
  });

  it('filters that match nothing name the filters and the catalog size', async () => {
    const { code, stdout } = await cli('tools', 'list', '--search', 'zzz-nothing', '--plugin', 'weather');
    assert.equal(code, 0);
    assert.equal(stdout, "No tools match --plugin 'weather' --search 'zzz-nothing' (the catalog has 2 tools); 'quiver tools list' without filters lists them.\n");
  });

  it('select with nothing enabled in the workspace says where to enable a plugin; once enabled it selects', async () => {
    assert.equal((await cli('workspace', 'create', 'team')).code, 0);
    const empty = await cli('select', 'weather in Paris', '--workspace', 'team');
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, /^No tools to select from: none of the catalog's 2 tools is enabled in workspace 'team'/);
    assert.match(empty.stdout, /quiver plugin enable NAME --workspace team/);
    assert.equal((await cli('plugin', 'enable', 'weather', '--workspace', 'team')).code, 0);
    const selected = await cli('select', 'weather in Paris', '--workspace', 'team');
    assert.equal(selected.code, 0, selected.stderr);
    assert.match(selected.stdout, /weather__get_current_weather/);
    assert.doesNotMatch(selected.stdout, /No tools to select from/);
  });

  it('a marketplace search with no match says what the marketplace holds', async () => {
    const { code, stdout } = await cli('marketplace', 'search', 'email');
    assert.equal(code, 0);
    assert.match(stdout, /^No marketplace entry matches 'email'\. The marketplace holds what 'quiver marketplace import FILE' imported/);
  });
});
