/**
 * The README's first session, with a real git repository standing in for the git-hosted
 * plugin: install at a tag, create a workspace, enable it there, list its tools, delete the
 * remote, and the installed plugin still starts and answers (its code is in Quiver's cache).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBinary } from '../helpers/cli.ts';
import { createRawPluginFolder } from '../plugins/raw-server.ts';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.invalid', GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

describe('README walkthrough with a git-hosted plugin', { timeout: 300_000 }, () => {
  let root: string;
  let remote: string;
  let env: Record<string, string>;
  const quiver = (...args: string[]) => runBinary([...args, '--json'], env, 120_000);

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
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('installs at a tag, enables in a new workspace, lists tools, and keeps working without the remote', async () => {
    const added = await quiver('plugin', 'add', `file://${remote}`, '--ref', 'v1.2.0', '--name', 'weather-mcp');
    assert.equal(added.code, 0, added.stderr);

    assert.equal((await quiver('workspace', 'create', 'research')).code, 0);
    const enabled = await quiver('plugin', 'enable', 'weather-mcp', '--workspace', 'research');
    assert.equal(enabled.code, 0, enabled.stderr);

    const tools = await quiver('tools', 'list', '--plugin', 'weather-mcp');
    const names = (JSON.parse(tools.stdout) as { items: Array<{ qualifiedName: string }> }).items.map((t) => t.qualifiedName).sort();
    assert.deepEqual(names, ['weather-mcp__echo', 'weather-mcp__fail']);

    const selected = await quiver('select', 'echo this text back', '--workspace', 'research', '--k', '1');
    assert.equal(selected.code, 0, selected.stderr);
    assert.equal((JSON.parse(selected.stdout) as { tools: Array<{ qualifiedName: string }> }).tools[0]?.qualifiedName, 'weather-mcp__echo');

    rmSync(remote, { recursive: true, force: true });
    const check = await quiver('plugin', 'health', 'weather-mcp', '--check');
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /"ok"\s*:\s*true|ok/);
  });
});
