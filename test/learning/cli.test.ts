/**
 * `quiver tools examples list|delete|disable|enable` on a data folder (issue #13): examples
 * learned by the app through selections and outcomes are listed per organisation, disabled
 * and enabled, and deleted.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { runInProcess } from '../helpers/cli.ts';
import { LEARNING_TOOLS, PARAPHRASE } from './catalog-fixture.ts';

describe('quiver tools examples (learned example queries)', () => {
  let dir: string;
  const data = () => join(dir, 'data');
  const cli = (...argv: string[]) => runInProcess([...argv, '--data', data()]);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quiver-learning-cli-'));
    const app = await createApp(loadConfig({ QUIVER_HOME: dir, QUIVER_DATA_DIR: data(), QUIVER_LOG_LEVEL: 'silent' }));
    try {
      await app.catalog.syncPlugin({ pluginId: 'kit', version: '1.0.0', tools: LEARNING_TOOLS.map((tool) => ({ ...tool })) });
      for (const [orgId, userId] of [['org-a', 'u1'], ['org-a', 'u2'], ['org-b', 'u3']] as const) {
        const result = await app.selection.selectTools({ query: `${PARAPHRASE} (${userId})`, k: 10, context: { orgId, userId } });
        await app.selection.recordOutcome(result.metadata.eventId!, { toolsCalled: ['kit__convert_currency'], success: true });
      }
      await app.selection.flush();
    } finally {
      await app.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists every organisation, or one with --org', async () => {
    const all = await cli('tools', 'examples', 'list', 'kit__convert_currency', '--json');
    assert.equal(all.code, 0, all.stderr);
    const parsed = JSON.parse(all.stdout) as { tool: string; examples: Array<{ orgScope: string; text: string }>; disabledIn: string[] };
    assert.equal(parsed.tool, 'kit__convert_currency');
    assert.deepEqual(parsed.examples.map((row) => row.orgScope).sort(), ['org-a', 'org-a', 'org-b']);
    const table = await cli('tools', 'examples', 'list', 'kit__convert_currency', '--org', 'org-b');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /how many yen will my dollars buy \(u3\)/);
    assert.doesNotMatch(table.stdout, /\(u1\)/);
    const none = await cli('tools', 'examples', 'list', 'kit__weather_forecast');
    assert.match(none.stdout, /no learned example queries/);
    const unknown = await cli('tools', 'examples', 'list', 'kit__nothing');
    assert.notEqual(unknown.code, 0);
  });

  it('disables and enables learning in one organisation', async () => {
    const off = await cli('tools', 'examples', 'disable', 'kit__convert_currency', '--org', 'org-a');
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stdout, /Learning disabled for kit__convert_currency in org-a/);
    assert.match((await cli('tools', 'examples', 'list', 'kit__convert_currency')).stdout, /learning disabled in: org-a/);
    assert.equal((await cli('tools', 'examples', 'enable', 'kit__convert_currency', '--org', 'org-a')).code, 0);
    assert.doesNotMatch((await cli('tools', 'examples', 'list', 'kit__convert_currency')).stdout, /learning disabled/);
  });

  it('deletes one organisation, then the rest', async () => {
    const one = await cli('tools', 'examples', 'delete', 'kit__convert_currency', '--org', 'org-a', '--json');
    assert.deepEqual(JSON.parse(one.stdout), { tool: 'kit__convert_currency', deleted: 2 });
    const rest = await cli('tools', 'examples', 'delete', 'kit__convert_currency');
    assert.match(rest.stdout, /Deleted 1 learned example query of kit__convert_currency/);
  });
});
