/**
 * The README's first session, verbatim, with `quiver serve` running throughout (issue #15):
 * the commands are read from the README's "A first session" block and run as real processes
 * while the server owns the embedded folder, so they go through it. The git-hosted plugin's
 * GitHub URL is the one substitution: a real git repository with a `v1.2.0` tag stands in for it
 * (this machine reaches no git host), and its remote is deleted afterwards — the installed
 * plugin keeps working from Quiver's cache. Finally an MCP client over Streamable HTTP uses the
 * real server-memory installed by the README, with no extra configuration.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { createRawPluginFolder } from '../plugins/raw-server.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const GITHUB_URL = 'https://github.com/acme/weather-mcp';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.invalid', GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

/** Splits a shell command line into words (double and single quotes, no expansions). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

/** The `npx quiver …` lines of the README's "A first session" code block. */
function firstSessionCommands(): string[][] {
  const section = README.split(/^## /m).find((part) => part.startsWith('A first session'));
  assert.ok(section, 'the README has a "A first session" section');
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'with a sh code block');
  return block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('npx quiver '))
    .map((line) => shellWords(line.replace(/\s+#.*$/, '')).slice(2));
}

describe('README first session, verbatim, with quiver serve running', { timeout: 600_000 }, () => {
  let root: string;
  let remote: string;
  let env: Record<string, string>;
  let server: { child: ChildProcess; url: string; stderr: () => string } | undefined;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-readme-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin cache
    const work = await createRawPluginFolder(root, 'weather-mcp');
    git(work, 'init', '-q', '-b', 'main');
    git(work, 'add', '.');
    git(work, 'commit', '-q', '-m', 'v1');
    git(work, 'tag', 'v1.2.0');
    remote = join(root, 'weather-mcp.git');
    git(root, 'clone', '-q', '--bare', work, remote);
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data') };
    server = await startServe(['--http', '127.0.0.1:0'], env);
  });
  after(async () => {
    if (server) await stopChild(server.child);
    rmSync(root, { recursive: true, force: true });
  });

  it('runs every command of the first session through the running server', async () => {
    const commands = firstSessionCommands();
    assert.ok(commands.length >= 6, `found ${commands.length} commands`);
    const outputs: Record<string, string> = {};
    for (const words of commands) {
      if (words[0] === 'serve') continue; // the server is already running
      const args = words.map((word) => (word === GITHUB_URL ? `file://${remote}` : word));
      const run = await runBinary(args, env, 300_000);
      assert.equal(run.code, 0, `quiver ${args.join(' ')}\n${run.stderr}`);
      outputs[args.slice(0, 2).join(' ') + (args[0] === 'plugin' && args[1] === 'add' ? ` ${args[2]}` : '')] = run.stdout;
    }
    // What the README promises those commands show.
    const toolsOfMemory = Object.entries(outputs).find(([key]) => key.startsWith('plugin tools'))?.[1] ?? '';
    assert.match(toolsOfMemory, /create_entities/);
    const listed = Object.entries(outputs).find(([key]) => key.startsWith('tools list'))?.[1] ?? '';
    assert.match(listed, /weather-mcp__echo/);
    const selected = Object.entries(outputs).find(([key]) => key.startsWith('select'))?.[1] ?? '';
    assert.match(selected, /memory__create_entities/);

    // The remote disappears; the installed plugin keeps working from the cache.
    rmSync(remote, { recursive: true, force: true });
    const check = await runBinary(['plugin', 'health', 'weather-mcp', '--check', '--json'], env, 120_000);
    assert.equal(check.code, 0, check.stdout + check.stderr);
  });

  it('serves server-memory to an MCP client over HTTP with no extra configuration', async () => {
    const adminKey = /qvr_[A-Za-z0-9_-]+/.exec(server!.stderr())?.[0];
    assert.ok(adminKey, 'the first serve printed the admin key');
    const transport = new StreamableHTTPClientTransport(new URL(`${server!.url}/mcp?exposure=all`), {
      requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
    });
    const client = new Client({ name: 'readme-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const created = (await client.callTool({
        name: 'memory__create_entities',
        arguments: { entities: [{ name: 'Alice', entityType: 'person', observations: ['works at Acme'] }] },
      })) as { isError?: boolean; content: Array<{ text?: string }> };
      assert.notEqual(created.isError, true, JSON.stringify(created));
      const graph = (await client.callTool({ name: 'memory__read_graph', arguments: {} })) as { content: Array<{ text?: string }> };
      assert.match(graph.content.map((block) => block.text ?? '').join(''), /Alice/);
    } finally {
      await client.close();
    }
  });
});
