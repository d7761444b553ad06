/**
 * `quiver plugin env set|unset|list` and what `plugin show` adds for issue #15 (the id, the
 * state folder, the settings), through the real CLI runner against a real app on every backend.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createPluginFolder, nodeModules, openTempDir } from '../plugins/helpers.ts';

describeEachBackend('plugin env CLI', (backend) => {
  let root: string;
  let app: App;

  /** Runs `quiver ARGV`; a refused command's message (stderr) is kept in `stderr`. */
  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string; json: any }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, commands, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) }, { QUIVER_LOG_LEVEL: 'silent' }, { app, cwd: root });
    return { code, stdout, stderr, json: argv.includes('--json') && code === 0 ? JSON.parse(stdout) : undefined };
  }

  before(async () => {
    root = await openTempDir('env-cli');
    app = await createApp(loadConfig({ QUIVER_HOME: join(root, 'home'), QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db: await backend.open() });
    // The fixture server imports the SDK from this checkout: a read-only host-folder grant lets the sandbox see it.
    const added = await quiver('plugin', 'add', await createPluginFolder(root, 'calc', 'calc'), '--name', 'calc', '--mount', `${nodeModules}:ro`);
    assert.equal(added.code, 0, added.stderr);
  });
  after(async () => {
    await app?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('sets, lists and unsets settings; show prints the id, the state folder and the settings', async () => {
    assert.match((await quiver('plugin', 'env', 'list', 'calc')).stdout, /No settings for calc: add one with 'quiver plugin env set calc KEY VALUE'/);
    const set = await quiver('plugin', 'env', 'set', 'calc', 'REGION', 'eu-west');
    assert.equal(set.code, 0);
    assert.match(set.stdout, /set REGION for calc; the plugin restarts with it on its next call/);
    assert.deepEqual((await quiver('plugin', 'env', 'set', 'calc', 'EMPTY', '', '--json')).json.value, '');
    const listed = await quiver('plugin', 'env', 'list', 'calc');
    assert.match(listed.stdout, /KEY\s+VALUE\s+UPDATED/);
    assert.match(listed.stdout, /REGION\s+eu-west\s+\d{4}-/);

    const shown = await quiver('plugin', 'show', 'calc');
    const details = await app.plugins.show('calc');
    const stateRoot = join(root, 'home', 'state');
    assert.match(shown.stdout, new RegExp(`  id: ${details.plugin.id}`));
    assert.match(shown.stdout, new RegExp(`  state folder: ${join(stateRoot, details.plugin.id)}`));
    assert.match(shown.stdout, /  settings: EMPTY=, REGION=eu-west/);
    const json = (await quiver('plugin', 'show', 'calc', '--json')).json;
    assert.equal(json.stateDir, join(stateRoot, details.plugin.id));
    assert.deepEqual(json.env.map((row: { key: string }) => row.key), ['EMPTY', 'REGION']);

    assert.match((await quiver('plugin', 'env', 'unset', 'calc', 'REGION')).stdout, /removed REGION from calc/);
    const again = await quiver('plugin', 'env', 'unset', 'calc', 'REGION');
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /REGION/);
    assert.deepEqual((await quiver('plugin', 'env', 'list', 'calc', '--json')).json.env.map((row: { key: string }) => row.key), ['EMPTY']);
  });

  it('says how to use each command when arguments are missing, and refuses loader variables', async () => {
    const refused = async (argv: string[], message: RegExp) => {
      const result = await quiver(...argv);
      assert.notEqual(result.code, 0, argv.join(' '));
      assert.match(result.stderr, message);
    };
    await refused(['plugin', 'env', 'set', 'calc', 'ONLY_KEY'], /usage: quiver plugin env set NAME KEY VALUE/);
    await refused(['plugin', 'env', 'unset', 'calc'], /usage: quiver plugin env unset NAME KEY/);
    await refused(['plugin', 'env', 'list'], /usage: quiver plugin env list NAME/);
    await refused(['plugin', 'env', 'set', 'calc', 'LD_PRELOAD', '/x.so'], /LD_PRELOAD/);
  });
});
