/**
 * `quiver plugin env set|unset|list` and what `plugin show` adds for issue #15 (the id, the
 * state folder, the settings), run in-process against a real plugins service.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { App } from '../../src/app.ts';
import { GLOBAL_OPTIONS, type CliContext, type CommandSpec } from '../../src/cli/command.ts';
import { pluginCommands } from '../../src/cli/commands/plugin.ts';
import { pluginEnvCommands } from '../../src/cli/commands/plugin-env.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import { createCatalogService } from '../../src/catalog/index.ts';
import { createPluginService, type PluginService } from '../../src/plugins/service.ts';
import { createSecretBox } from '../../src/plugins/secret-box.ts';
import { createSupervisor, type Supervisor } from '../../src/runtime/supervisor.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createPluginFolder, nodeModules, openTempDir } from '../plugins/helpers.ts';
import { randomBytes } from 'node:crypto';

const commands: CommandSpec[] = [...pluginCommands, ...pluginEnvCommands];

describeEachBackend('plugin env CLI', (backend) => {
  let db: Database;
  let root: string;
  let supervisor: Supervisor;
  let plugins: PluginService;

  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; json: any }> {
    const command = commands.filter((candidate) => candidate.path.every((word, index) => argv[index] === word)).sort((a, b) => b.path.length - a.path.length)[0]!;
    const parsed = parseArgs({ args: argv.slice(command.path.length), options: { ...GLOBAL_OPTIONS, ...(command.options ?? {}) }, allowPositionals: true, strict: true });
    let stdout = '';
    const context: CliContext = {
      args: { values: parsed.values, positionals: parsed.positionals },
      io: { stdout: (text) => (stdout += text), stderr: () => undefined },
      env: {},
      json: parsed.values.json === true,
      config: () => assert.fail('not used'),
      openApp: async () => ({ plugins }) as unknown as App,
      cwd: root,
      readStdin: async () => undefined,
    };
    const code = await command.run(context);
    return { code, stdout, json: context.json ? JSON.parse(stdout) : undefined };
  }

  before(async () => {
    db = await backend.open();
    root = await openTempDir('env-cli');
    supervisor = createSupervisor({ startTimeoutMs: 15_000, stopGraceMs: 200, sandbox: { stateRoot: join(root, 'state') } });
    plugins = createPluginService({
    // The machine's environment for git and npm, as the app hands over config.commandEnv.
    commandEnv: process.env,
      db, catalog: createCatalogService({ db }), supervisor, cacheDir: join(root, 'plugins'), stateRoot: join(root, 'state'),
      secrets: createSecretBox(randomBytes(32)), readOnlyPaths: [nodeModules],
    });
    await plugins.add(await createPluginFolder(root, 'calc', 'calc'), { name: 'calc' });
  });
  after(async () => {
    await supervisor.close();
    await db.close();
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
    const details = await plugins.show('calc');
    assert.match(shown.stdout, new RegExp(`  id: ${details.plugin.id}`));
    assert.match(shown.stdout, new RegExp(`  state folder: ${join(root, 'state', details.plugin.id)}`));
    assert.match(shown.stdout, /  settings: EMPTY=, REGION=eu-west/);
    const json = (await quiver('plugin', 'show', 'calc', '--json')).json;
    assert.equal(json.stateDir, join(root, 'state', details.plugin.id));
    assert.deepEqual(json.env.map((row: { key: string }) => row.key), ['EMPTY', 'REGION']);

    assert.match((await quiver('plugin', 'env', 'unset', 'calc', 'REGION')).stdout, /removed REGION from calc/);
    await assert.rejects(quiver('plugin', 'env', 'unset', 'calc', 'REGION'), (error: unknown) => isQuiverError(error, 'not_found'));
    assert.deepEqual((await quiver('plugin', 'env', 'list', 'calc', '--json')).json.env.map((row: { key: string }) => row.key), ['EMPTY']);
  });

  it('says how to use each command when arguments are missing, and refuses loader variables', async () => {
    await assert.rejects(quiver('plugin', 'env', 'set', 'calc', 'ONLY_KEY'), /usage: quiver plugin env set NAME KEY VALUE/);
    await assert.rejects(quiver('plugin', 'env', 'unset', 'calc'), /usage: quiver plugin env unset NAME KEY/);
    await assert.rejects(quiver('plugin', 'env', 'list'), /usage: quiver plugin env list NAME/);
    await assert.rejects(quiver('plugin', 'env', 'set', 'calc', 'LD_PRELOAD', '/x.so'), (error: unknown) => isQuiverError(error, 'invalid_input'));
  });
});
