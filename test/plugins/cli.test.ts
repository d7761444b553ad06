/**
 * `quiver plugin …` and `quiver marketplace …` commands, run in-process against a real
 * plugins service (the app wiring is the composition root's; here `openApp` hands the
 * service over as `app.plugins`).
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import type { App } from '../../src/app.ts';
import { GLOBAL_OPTIONS, type CliContext } from '../../src/cli/command.ts';
import { pluginCommands } from '../../src/cli/commands/plugin.ts';
import { createHarness, createPluginFolder, openTempDir, type PluginsHarness } from './helpers.ts';

const SECRET = `cli-${randomBytes(8).toString('hex')}`;

describeEachBackend('plugin CLI', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let root: string;

  /** Runs `quiver <argv>` and returns its exit code and output. */
  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; json: any }> {
    const command = pluginCommands
      .filter((candidate) => candidate.path.every((word, index) => argv[index] === word))
      .sort((a, b) => b.path.length - a.path.length)[0]!;
    const parsed = parseArgs({ args: argv.slice(command.path.length), options: { ...GLOBAL_OPTIONS, ...(command.options ?? {}) }, allowPositionals: true, strict: true });
    let stdout = '';
    const context: CliContext = {
      args: { values: parsed.values, positionals: parsed.positionals },
      io: { stdout: (text) => (stdout += text), stderr: () => undefined },
      env: {},
      json: parsed.values.json === true,
      config: () => assert.fail('not used'),
      openApp: async () => ({ plugins: harness.plugins }) as unknown as App,
      cwd: process.cwd(),
      readStdin: async () => undefined,
    };
    const code = await command.run(context);
    return { code, stdout, json: context.json ? JSON.parse(stdout) : undefined };
  }

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db);
    root = await openTempDir('cli');
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('adds, lists, shows and lists tools', async () => {
    const folder = await createPluginFolder(root, 'calc', 'calc');
    const added = await quiver('plugin', 'add', folder, '--name', 'calc', '--secret', `FIXTURE_TOKEN=${SECRET}`, '--json');
    assert.equal(added.code, 0);
    assert.deepEqual(added.json.tools.inserted.sort(), ['add', 'echo']);
    const text = await quiver('plugin', 'add', await createPluginFolder(root, 'bare', 'bare'));
    assert.match(text.stdout, /^installed bare 0\.3\.0 \(path\) — 5 tools: 5 new/);
    const listed = await quiver('plugin', 'list');
    assert.match(listed.stdout, /NAME\s+VERSION\s+SOURCE\s+STATUS\s+TOOLS/);
    assert.match(listed.stdout, /calc\s+1\.0\.0\s+path\s+active\s+2\s+1/);
    const shown = await quiver('plugin', 'show', 'calc');
    assert.match(shown.stdout, /credentials: FIXTURE_TOKEN=set/);
    assert.match(shown.stdout, /warning: .*'Arithmetic'/);
    assert.ok(!shown.stdout.includes(SECRET) && !added.stdout.includes(SECRET));
    const tools = await quiver('plugin', 'tools', 'calc', '--json');
    assert.deepEqual(tools.json.tools.map((t: { qualifiedName: string }) => t.qualifiedName).sort(), ['calc__add', 'calc__echo']);
  });

  it('enables and disables per project, sets secrets, syncs and removes', async () => {
    await harness.plugins.createProject('default', { name: 'web' });
    const disabled = await quiver('plugin', 'disable', 'calc', '--project', 'web', '--json');
    assert.deepEqual(disabled.json.enablements, [
      { workspace: 'default', project: null, enabled: true },
      { workspace: 'default', project: 'web', enabled: false },
    ]);
    assert.match((await quiver('plugin', 'enable', 'calc', '--project', 'web')).stdout, /enabled calc in default\/web/);
    const secret = await quiver('plugin', 'secret', 'set', 'calc', 'EXTRA', SECRET);
    assert.match(secret.stdout, /stored EXTRA for calc \(not declared/);
    assert.ok(!secret.stdout.includes(SECRET));
    assert.match((await quiver('plugin', 'sync', 'calc')).stdout, /synced calc .* 2 unchanged/);
    assert.equal((await quiver('plugin', 'remove', 'bare', '--json')).json.removed, 'bare');
    assert.doesNotMatch((await quiver('plugin', 'list')).stdout, /bare/);
    assert.match((await quiver('plugin', 'list', '--all')).stdout, /bare\s+0\.3\.0\s+path\s+removed/);
    await assert.rejects(quiver('plugin', 'add'), /usage: quiver plugin add SOURCE/);
    await assert.rejects(quiver('plugin', 'add', root, '--header', 'no-equals'), /--header takes KEY=VALUE/);
  });

  it('imports a marketplace file and searches it', async () => {
    const file = join(root, 'servers.json');
    await writeFile(file, JSON.stringify({ servers: [{ server: { name: 'io.github.acme/notes', description: 'Take and search notes.', remotes: [{ type: 'streamable-http', url: 'https://notes.example.com/mcp' }] } }] }));
    assert.match((await quiver('marketplace', 'import', file)).stdout, /imported 1 servers \(1 new, 0 updated\)/);
    const found = await quiver('marketplace', 'search', 'search', 'my', 'notes', '--json');
    assert.equal(found.json.results[0].install, 'market:io.github.acme/notes');
    assert.match((await quiver('marketplace', 'search', 'notes')).stdout, /io\.github\.acme\/notes\s+market:io\.github\.acme\/notes/);
  });
});
