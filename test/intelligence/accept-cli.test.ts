/**
 * `quiver pid accept|reject` out of process: the real binary installs a real stdio plugin,
 * generates its document from discovery, accepts it (recorded with the generation, hashes and
 * the CLI user), `pid status` and `pid diff` say the current document is that generation,
 * rejecting the accepted generation and accepting an unknown generation id are refused with
 * exit 1 and a JSON error naming the reason, and the current document stays untouched.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runBinary } from '../helpers/cli.ts';
import { openTempDir } from '../plugins/helpers.ts';
import { createPinningPluginFolder } from '../trust/pinning-fixture.ts';

describe('quiver pid accept/reject (binary)', () => {
  let root: string;
  let env: Record<string, string>;

  before(async () => {
    root = await openTempDir('pid-accept-cli');
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_VERIFY_ON_INSTALL: 'off' };
    const folder = await createPinningPluginFolder(root, 'weather-src');
    const added = await runBinary(['plugin', 'add', folder, '--name', 'weather'], env);
    assert.equal(added.code, 0, added.stderr);
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('accepts the generated document with provenance and refuses what it must', async () => {
    const generated = await runBinary(['pid', 'generate', 'weather', '--from', 'mcp'], env);
    assert.equal(generated.code, 0, generated.stderr);
    const before = await runBinary(['pid', 'status', 'weather'], env);
    assert.match(before.stdout, /current document: not accepted from a generation; newest generation [0-9a-f-]{36} \(candidate\)/);
    const wrong = await runBinary(['pid', 'accept', 'weather', '--generation', '00000000-0000-4000-8000-000000000000', '--json'], env);
    assert.equal(wrong.code, 1, wrong.stdout);
    assert.match(wrong.stderr, /is not the latest of weather/);
    const accepted = await runBinary(['pid', 'accept', 'weather', '--json'], env);
    assert.equal(accepted.code, 0, accepted.stderr);
    const report = JSON.parse(accepted.stdout) as { generationId: string; acceptedBy: string; forced: boolean };
    assert.match(report.acceptedBy, /^cli:/);
    assert.equal(report.forced, false);
    const status = await runBinary(['pid', 'status', 'weather'], env);
    assert.match(status.stdout, new RegExp(`accepted from generation ${report.generationId} by cli:.*that is the newest generation`));
    const diff = await runBinary(['pid', 'diff', 'weather'], env);
    assert.match(diff.stdout, /the generated document equals the current one/);
    const reject = await runBinary(['pid', 'reject', 'weather', '--json'], env);
    assert.equal(reject.code, 1);
    assert.match(reject.stderr, /already the accepted document/);
  });
});
