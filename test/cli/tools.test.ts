import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess } from '../helpers/cli.ts';

describe('quiver sync and quiver tools (one data folder across invocations)', () => {
  let dir: string;
  const payload = (description: string, extra: Array<{ name: string; description: string }> = []) => ({
    pluginId: 'weather',
    version: '1.0.0',
    tools: [
      { name: 'get_current_weather', description, parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'get_weather_forecast', description: 'Forecast for the next days' },
      ...extra,
    ],
  });
  const cli = (...argv: string[]) => runInProcess([...argv, '--data', join(dir, 'data')]);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quiver-tools-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('syncs a payload, then re-syncs differentially', async () => {
    writeFileSync(join(dir, 'v1.json'), JSON.stringify(payload('Current weather for a city')));
    const first = await cli('sync', join(dir, 'v1.json'), '--json');
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual((JSON.parse(first.stdout) as { inserted: string[] }).inserted.sort(), ['get_current_weather', 'get_weather_forecast']);

    writeFileSync(join(dir, 'v2.json'), JSON.stringify(payload('Current weather, temperature and wind for a city')));
    const second = await cli('sync', join(dir, 'v2.json'), '--json');
    const report = JSON.parse(second.stdout) as { updated: string[]; unchanged: number; markedStale: string[] };
    assert.deepEqual(report.updated, ['get_current_weather']);
    assert.equal(report.unchanged, 1);
    assert.deepEqual(report.markedStale, ['get_current_weather']);
  });

  it('lists, shows and shows the history of a tool by qualified name', async () => {
    const list = await cli('tools', 'list', '--plugin', 'weather', '--json');
    assert.equal(list.code, 0, list.stderr);
    const page = JSON.parse(list.stdout) as { total: number; items: Array<{ qualifiedName: string }> };
    assert.equal(page.total, 2);
    assert.ok(page.items.some((t) => t.qualifiedName === 'weather__get_current_weather'));

    const table = await cli('tools', 'list');
    assert.match(table.stdout, /weather__get_weather_forecast/);

    const show = await cli('tools', 'show', 'weather__get_current_weather', '--json');
    assert.equal((JSON.parse(show.stdout) as { version: number }).version, 2);

    const history = await cli('tools', 'history', 'weather__get_current_weather', '--json');
    const versions = (JSON.parse(history.stdout) as { versions: Array<{ version: number; changedFields: string[] }> }).versions;
    assert.deepEqual(versions.map((v) => v.version).sort(), [1, 2]);
    assert.ok(versions.find((v) => v.version === 2)!.changedFields.includes('description'));
  });

  it('rolls back to version 1 as a new version', async () => {
    const result = await cli('tools', 'rollback', 'weather__get_current_weather', '--version', '1', '--reason', 'bad wording', '--json');
    assert.equal(result.code, 0, result.stderr);
    const tool = JSON.parse(result.stdout) as { version: number; description: string };
    assert.equal(tool.version, 3);
    assert.equal(tool.description, 'Current weather for a city');
  });

  it('rejects a payload with a separator in a tool name and changes nothing', async () => {
    writeFileSync(join(dir, 'bad.json'), JSON.stringify(payload('x', [{ name: 'bad__name', description: 'no' }])));
    const result = await cli('sync', join(dir, 'bad.json'), '--json');
    assert.equal(result.code, 2);
    assert.match(result.stderr, /separator|__/);
    const show = await cli('tools', 'show', 'weather__get_current_weather', '--json');
    assert.equal((JSON.parse(show.stdout) as { version: number }).version, 3);
  });

  it('exits 3 for an unknown tool and 2 for a missing version flag', async () => {
    assert.equal((await cli('tools', 'show', 'weather__nope')).code, 3);
    assert.equal((await cli('tools', 'rollback', 'weather__get_current_weather')).code, 2);
  });
});
