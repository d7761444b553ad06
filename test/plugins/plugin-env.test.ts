/**
 * Non-secret plugin settings (issue #15, src/plugins/plugin-env.ts): `setEnv` reaches the real
 * server-everything's environment (its `get-env` tool prints it) inside the sandbox; a changed
 * value restarts the process with the new one, `unsetEnv` takes it away; `show` lists settings
 * in plain; keys that are secrets, required or header credentials, `LD_*` and `QUIVER_*` are
 * refused with a reason; a secret and a setting never share a key.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isQuiverError } from '../../src/core/errors.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createHarness, repoRoot, type PluginsHarness } from './helpers.ts';

const INSTALL_TIMEOUT = 300_000;
const everythingVersion = (JSON.parse(readFileSync(join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/package.json'), 'utf8')) as { version: string }).version;
const npmCacheDir = process.env.QUIVER_TEST_NPM_CACHE;

/** The environment server-everything's `get-env` tool reports, as an object. */
async function pluginEnvironment(harness: PluginsHarness, plugin: string): Promise<Record<string, string>> {
  const spec = await harness.plugins.upstreamSpec(plugin);
  const result = await harness.supervisor.callTool(spec, 'get-env', {});
  const text = (result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
  return JSON.parse(text) as Record<string, string>;
}

describeEachBackend('plugin settings (plugin env)', (backend) => {
  let db: Database;
  let harness: PluginsHarness;

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db, { discoveryTimeoutMs: 60_000, ...(npmCacheDir === undefined ? {} : { npmCacheDir }), extra: { npmTimeoutMs: INSTALL_TIMEOUT } });
    await harness.plugins.add(`npm:@modelcontextprotocol/server-everything@${everythingVersion}`, { name: 'everything' });
  });
  after(async () => {
    await harness.close();
    await db.close();
  });

  it('passes a setting to the sandboxed process, restarts it on change and drops it on unset', { timeout: INSTALL_TIMEOUT }, async () => {
    assert.equal((await pluginEnvironment(harness, 'everything'))['GREETING'], undefined);
    const set = await harness.plugins.setEnv('everything', 'GREETING', 'hello, plain world');
    assert.deepEqual([set.key, set.value], ['GREETING', 'hello, plain world']);
    assert.equal((await pluginEnvironment(harness, 'everything'))['GREETING'], 'hello, plain world');
    const pluginId = (await harness.plugins.show('everything')).plugin.id;
    const pidOf = () => harness.supervisor.processes().find((process) => process.pluginId === pluginId)?.pid;
    const pidBefore = pidOf();
    assert.ok(pidBefore !== undefined);

    await harness.plugins.setEnv('everything', 'GREETING', 'changed');
    await harness.plugins.setEnv('everything', 'EMPTY_ONE', '');
    const changed = await pluginEnvironment(harness, 'everything');
    assert.equal(changed['GREETING'], 'changed');
    assert.equal(changed['EMPTY_ONE'], '');
    assert.notEqual(pidOf(), pidBefore, 'a new process with the new environment');

    const details = await harness.plugins.show('everything');
    assert.deepEqual(details.env.map((row) => [row.key, row.value]), [['EMPTY_ONE', ''], ['GREETING', 'changed']]);
    assert.deepEqual((await harness.plugins.listEnv('everything')).map((row) => row.key), ['EMPTY_ONE', 'GREETING']);

    assert.equal(await harness.plugins.unsetEnv('everything', 'GREETING'), true);
    assert.equal(await harness.plugins.unsetEnv('everything', 'GREETING'), false, 'not set any more');
    assert.equal((await pluginEnvironment(harness, 'everything'))['GREETING'], undefined);
  });

  it('refuses keys that are not plain settings, saying why', async () => {
    const refused = async (key: string, value: string, code: string, pattern: RegExp) =>
      assert.rejects(harness.plugins.setEnv('everything', key, value), (error: unknown) => isQuiverError(error, code) && pattern.test((error as Error).message));
    await refused('1BAD', 'x', 'invalid_input', /environment-variable names/);
    await refused('LD_PRELOAD', '/tmp/x.so', 'invalid_input', /outside its sandbox/);
    await refused('QUIVER_SUPERVISOR_ID', 'x', 'invalid_input', /outside its sandbox/);
    await refused('BIG', 'x'.repeat(65_537), 'invalid_input', /64 KiB/);

    await harness.plugins.setSecret('everything', 'API_TOKEN', 'tok-secret-value');
    await refused('API_TOKEN', 'plain', 'conflict', /stored as a secret/);
    await harness.plugins.setEnv('everything', 'MODE', 'fast');
    await assert.rejects(harness.plugins.setSecret('everything', 'MODE', 'hidden'), (error: unknown) => isQuiverError(error, 'conflict') && /plugin env unset everything MODE/.test((error as Error).message));
    assert.equal((await pluginEnvironment(harness, 'everything'))['API_TOKEN'], 'tok-secret-value', 'the secret still reaches the plugin');
    await assert.rejects(harness.plugins.setEnv('no-such-plugin', 'A', 'b'), (error: unknown) => isQuiverError(error, 'not_found'));
  });
});
