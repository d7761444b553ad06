/**
 * `quiver import FILE` (issue #15) with real npm servers: a Claude Desktop configuration listing
 * server-memory, server-everything and server-sequential-thinking through `npx`, plus a Deno
 * server (Python `uvx` entries are installed since issue #26: test/plugins/python-install.test.ts).
 * The three are installed, discovered in the sandbox and callable; the fourth is reported as refused with its reason; env values arrive as secrets. A dry run
 * installs nothing; importing again refuses each server whose name is taken, with a free name
 * for `--name ENTRY=NAME`, and the dry run says the same as the real run (issue #26).
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.ts';
import { EXIT_CODES } from '../../src/cli/command.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { openTempDir, repoRoot } from '../plugins/helpers.ts';

const INSTALL_TIMEOUT = 600_000;
const versionOf = (name: string) => (JSON.parse(readFileSync(join(repoRoot, 'node_modules/@modelcontextprotocol', name, 'package.json'), 'utf8')) as { version: string }).version;
const npmCacheDir = process.env.QUIVER_TEST_NPM_CACHE;

const claudeDesktopConfig = {
  mcpServers: {
    memory: { command: 'npx', args: ['-y', `@modelcontextprotocol/server-memory@${versionOf('server-memory')}`] },
    everything: { command: 'npx', args: ['-y', `@modelcontextprotocol/server-everything@${versionOf('server-everything')}`], env: { IMPORTED_LABEL: 'from-claude-desktop' } },
    'sequential-thinking': { command: 'npx', args: [`@modelcontextprotocol/server-sequential-thinking@${versionOf('server-sequential-thinking')}`] },
    deno: { command: 'deno', args: ['run', '-A', 'server.ts'] },
  },
};

describeEachBackend('quiver import (client configurations)', (backend) => {
  let app: App;
  let root: string;
  let file: string;
  // How often the command listed the installed plugins (the dry run reads them once, for the taken names).
  let listed = 0;

  /** `quiver import ARGV` through the real CLI runner, against this test's app and in its folder. */
  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string; json: any }> {
    let stdout = '';
    let stderr = '';
    // The app as the runner hands it to the command, its plugin list counted.
    const counted: App = { ...app, plugins: { ...app.plugins, list: (...args) => ((listed += 1), app.plugins.list(...args)) } };
    const code = await runCli(['import', ...argv], commands, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) }, {}, { app: counted, cwd: root });
    return { code, stdout, stderr, json: argv.includes('--json') && code === EXIT_CODES.ok ? JSON.parse(stdout) : undefined };
  }

  /** A refusal: the usage exit code and the reason on stderr. */
  function assertRefused(result: { code: number; stderr: string }, reason: RegExp): void {
    assert.equal(result.code, EXIT_CODES.usage, result.stderr);
    assert.match(result.stderr, reason);
  }

  before(async () => {
    const db = await backend.open();
    root = await openTempDir('import');
    app = await createApp(
      loadConfig({
        // The machine's environment for npm and git (the app hands it to install commands).
        ...process.env,
        ...(npmCacheDir === undefined ? {} : { npm_config_cache: npmCacheDir }),
        QUIVER_HOME: join(root, 'home'),
        QUIVER_DATABASE_URL: 'memory://',
        QUIVER_LOG_LEVEL: 'silent',
        QUIVER_DISCOVERY_TIMEOUT_MS: '60000',
        QUIVER_NPM_TIMEOUT_MS: '300000',
        QUIVER_VERIFY_ON_INSTALL: 'off',
      }),
      { db },
    );
    file = 'claude_desktop_config.json';
    await writeFile(join(root, file), JSON.stringify(claudeDesktopConfig, null, 2));
  });
  after(async () => {
    await app.close();
    await rm(root, { recursive: true, force: true });
  });

  it('a dry run says what it would do and touches nothing', async () => {
    const dry = await quiver(file, '--dry-run');
    assert.equal(dry.code, 0);
    assert.match(dry.stdout, /^STATUS\s+SERVER\s+PLUGIN\s+DETAIL$/m);
    assert.match(dry.stdout, /^would install\s+memory\s+memory\s+from npm:@modelcontextprotocol\/server-memory@/m);
    assert.match(dry.stdout, /^refused\s+deno\s+deno\s+a Deno server: Quiver runs Node servers only/m);
    assert.match(dry.stdout, /3 to install, 1 refused \(dry run: nothing installed\)/);
    assert.ok(listed <= 1, 'the installed names are read at most once');
    assert.deepEqual(await app.plugins.list(), []);
  });

  it('installs the three npm servers and reports the Deno one as not installed, with the reason', { timeout: INSTALL_TIMEOUT }, async () => {
    const result = await quiver(file, '--json');
    assert.equal(result.code, 0);
    const byEntry = Object.fromEntries(result.json.servers.map((outcome: { entry: string }) => [outcome.entry, outcome]));
    assert.deepEqual(
      result.json.servers.map((outcome: { entry: string; status: string }) => [outcome.entry, outcome.status]),
      [['memory', 'installed'], ['everything', 'installed'], ['sequential-thinking', 'installed'], ['deno', 'skipped']],
    );
    assert.match(byEntry.deno.reason, /a Deno server: Quiver runs Node servers only/);
    assert.equal(byEntry.deno.plugin, 'deno');
    assert.deepEqual([result.json.installed, result.json.skipped, result.json.failed], [3, 1, 0]);

    const installed = (await app.plugins.list()).map((plugin) => [plugin.name, plugin.sourceType]).sort();
    assert.deepEqual(installed, [['everything', 'npm'], ['memory', 'npm'], ['sequential-thinking', 'npm']]);
    for (const name of ['memory', 'everything', 'sequential-thinking']) {
      const tools = await app.plugins.tools(name);
      assert.equal(byEntry[name].tools, tools.length);
      assert.ok(tools.length >= 1, `${name} has tools`);
    }
    assert.ok((await app.plugins.tools('sequential-thinking')).some((tool) => tool.name === 'sequentialthinking'));

    // The env value is a secret (never shown), and it reaches the server.
    const everything = await app.plugins.show('everything');
    assert.deepEqual(everything.secrets.map((secret) => secret.key), ['IMPORTED_LABEL']);
    assert.ok(!JSON.stringify(result.json).includes('from-claude-desktop'), 'the value is not echoed');
    const env = await app.supervisor.callTool(await app.plugins.upstreamSpec('everything'), 'get-env', {});
    assert.equal(JSON.parse((env.content as Array<{ text: string }>)[0]!.text)['IMPORTED_LABEL'], 'from-claude-desktop');
  });

  it('importing again refuses the taken names with a free --name, and the dry run says the same', { timeout: INSTALL_TIMEOUT }, async () => {
    const dry = await quiver(file, '--dry-run', '--json');
    const again = await quiver(file, '--json');
    assert.equal(again.code, 0);
    const outcomes = (result: { json: { servers: Array<{ entry: string; status: string; reason?: string }> } }) => result.json.servers.map(({ entry, status, reason }) => [entry, status, reason]);
    assert.deepEqual(outcomes(dry), outcomes(again), 'dry run and real run agree');
    const memory = again.json.servers.find((outcome: { entry: string }) => outcome.entry === 'memory');
    assert.equal(memory.status, 'skipped');
    assert.match(memory.reason, /a plugin named 'memory' is already installed; to install this entry as well, import with --name memory=memory-2/);
    assert.deepEqual([again.json.installed, again.json.skipped, again.json.failed], [0, 4, 0]);
    const text = await quiver(file);
    assert.match(text.stdout, /^refused\s+memory\s+memory\s+a plugin named 'memory' is already installed/m);
    assert.match(text.stdout, /0 installed, 4 refused, 0 failed/);
    // The suggested name is taken up: the entry would install under it.
    const renamed = await quiver(file, '--dry-run', '--json', '--name', 'memory=memory-2');
    const renamedMemory = renamed.json.servers.find((outcome: { entry: string }) => outcome.entry === 'memory');
    assert.deepEqual([renamedMemory.plugin, renamedMemory.status], ['memory-2', 'would-install']);
    assert.match(renamedMemory.source, /^npm:@modelcontextprotocol\/server-memory@/);
    assertRefused(await quiver(file, '--dry-run', '--name', 'nosuch=x'), /has no server 'nosuch'/);
    assertRefused(await quiver(file, '--dry-run', '--name', 'memory'), /--name takes ENTRY=NAME/);
  });

  it('refuses a file that is not a client configuration', async () => {
    await writeFile(join(root, 'other.json'), '{"name": "not a client config"}');
    assertRefused(await quiver('other.json'), /not an MCP client configuration/);
    await writeFile(join(root, 'broken.json'), '{"mcpServers": ');
    assertRefused(await quiver('broken.json'), /is not valid JSON/);
    assertRefused(await quiver('missing.json'), /no such file/);
  });
});
