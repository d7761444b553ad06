/**
 * A failed install names its step once (issue #15): no `git -c failed:`, no `npm-install failed:
 * npm install failed:`. Real git and npm on sources that do not exist, through the real CLI.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess } from '../helpers/cli.ts';

const count = (text: string, pattern: RegExp) => text.match(new RegExp(pattern.source, 'g'))?.length ?? 0;

describe('install failures name the step once', () => {
  let folder: string;
  const cli = (...argv: string[]) => runInProcess([...argv, '--data', join(folder, 'data')]);
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'quiver-install-messages-'));
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('a git URL that is no repository: "clone failed: URL: what git said"', async () => {
    const url = `file://${join(folder, 'missing.git')}`;
    const { code, stderr } = await cli('plugin', 'add', url);
    assert.equal(code, 1);
    assert.match(stderr, new RegExp(`^quiver: cannot install plugin 'missing': clone failed: ${url}: fatal: `));
    assert.equal(count(stderr, /failed/), 1, stderr);
    assert.doesNotMatch(stderr, /git -c|cannot clone/);
  });

  it('a ref the repository lacks: "checkout failed" once', async () => {
    const repo = join(folder, 'repo');
    mkdirSync(repo);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' });
    git('init', '--quiet', '--initial-branch=main');
    writeFileSync(join(repo, 'README.md'), 'x\n');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '--quiet', '-m', 'one');
    const { code, stderr } = await cli('plugin', 'add', `file://${repo}`, '--ref', 'v9');
    assert.equal(code, 1);
    assert.match(stderr, /cannot install plugin 'repo': checkout failed: ref 'v9' is not a branch, tag or commit of file:\/\//);
    assert.equal(count(stderr, /failed/), 1, stderr);
  });

  it('an npm package that cannot be installed: "npm install failed:" then npm\'s own words', async () => {
    const { code, stderr } = await cli('plugin', 'add', `npm:file:${join(folder, 'no-package-here')}`);
    assert.equal(code, 1);
    assert.match(stderr, /^quiver: cannot install plugin 'no-package-here': npm install failed: npm error /);
    assert.equal(count(stderr, /npm install failed|npm-install failed/), 1, stderr);
  });
});
