/**
 * `quiver plugin …` and `quiver marketplace …` commands as users type them, through the real
 * CLI runner against a real app on every backend.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';
import { createPluginFolder, nodeModules, openTempDir } from './helpers.ts';

const SECRET = `cli-${randomBytes(8).toString('hex')}`;

describeEachBackend('plugin CLI', (backend) => {
  let app: App;
  let root: string;

  /** Runs `quiver <argv>` and returns its exit code and output. */
  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; json: any }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, commands, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) }, { QUIVER_LOG_LEVEL: 'silent' }, { app, cwd: root });
    // A refused command's message is on stderr: keep it beside stdout for the assertions.
    if (code !== 0 && stderr !== '') stdout += stderr;
    return { code, stdout, json: argv.includes('--json') && code === 0 ? JSON.parse(stdout) : undefined };
  }

  before(async () => {
    root = await openTempDir('cli');
    app = await createApp(loadConfig({ QUIVER_HOME: join(root, 'home'), QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db: await backend.open() });
  });
  after(async () => {
    await app?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('adds, lists, shows and lists tools', async () => {
    const folder = await createPluginFolder(root, 'calc', 'calc');
    // The fixture servers import the SDK from this checkout: a read-only host-folder grant lets the sandbox see it.
    const added = await quiver('plugin', 'add', folder, '--name', 'calc', '--secret', `FIXTURE_TOKEN=${SECRET}`, '--mount', `${nodeModules}:ro`, '--json');
    assert.equal(added.code, 0, added.stdout);
    assert.deepEqual(added.json.tools.inserted.sort(), ['add', 'echo']);
    const text = await quiver('plugin', 'add', await createPluginFolder(root, 'bare', 'bare'), '--mount', `${nodeModules}:ro`);
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
    await app.plugins.createProject('default', { name: 'web' });
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
    const usage = await quiver('plugin', 'add');
    assert.equal(usage.code, 2);
    assert.match(usage.stdout, /usage: quiver plugin add SOURCE/);
    const header = await quiver('plugin', 'add', root, '--header', 'no-equals');
    assert.equal(header.code, 2);
    assert.match(header.stdout, /--header takes KEY=VALUE/);
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
