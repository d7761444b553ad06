/**
 * "Did you mean …?" (issue #26): a mistyped command, or the name of a workspace or plugin that
 * does not exist but is one typo from one that does, gets the near name in the error — and an
 * unrelated word gets none.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closestMatch, editDistance } from '../../src/cli/did-you-mean.ts';
import { runInProcess } from '../helpers/cli.ts';

describe('did you mean', () => {
  let root: string;
  let env: Record<string, string>;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'quiver-dym-'));
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data') };
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('finds the nearest name within a typo, counting a swap of neighbours as one edit', () => {
    assert.equal(editDistance('reseach', 'research'), 1);
    assert.equal(editDistance('lsit', 'list'), 1);
    assert.equal(closestMatch('githbu', ['github', 'gitlab', 'memory']), 'github');
    assert.equal(closestMatch('weather', ['github', 'memory']), undefined);
    assert.equal(closestMatch('ab', ['xy']), undefined);
  });

  it('suggests the command for mistyped command words', async () => {
    const group = await runInProcess(['plugin', 'lst'], env);
    assert.equal(group.code, 2);
    assert.match(group.stderr, /Did you mean 'quiver plugin list'\?/);
    const top = await runInProcess(['plgin', 'show', 'x'], env);
    assert.match(top.stderr, /Did you mean 'quiver plugin show x'\?/);
    const none = await runInProcess(['frobnicate'], env);
    assert.doesNotMatch(none.stderr, /Did you mean/);
  });

  it('suggests an existing workspace for a mistyped one, in text and in --json details', async () => {
    assert.equal((await runInProcess(['workspace', 'create', 'research'], env)).code, 0);
    const typo = await runInProcess(['workspace', 'set', 'reseach', '--exposure', 'all'], env);
    assert.equal(typo.code, 3, typo.stderr);
    assert.match(typo.stderr, /workspace 'reseach' was not found; did you mean 'research'\?/);
    const json = await runInProcess(['workspace', 'set', 'reseach', '--exposure', 'all', '--json'], env);
    assert.equal((JSON.parse(json.stderr) as { error: { details: { suggestion: string } } }).error.details.suggestion, 'research');
    const far = await runInProcess(['workspace', 'set', 'marketing', '--exposure', 'all'], env);
    assert.equal(far.code, 3);
    assert.doesNotMatch(far.stderr, /did you mean/);
  });
});
