/**
 * Signed reports through the real `quiver` binary on an embedded data folder: `plugin verify
 * --json` prints progress per stage and the report, `verify-report check` accepts it offline
 * with the exported public key and refuses it once one byte of a value is changed, or against
 * another key. Then, while `quiver serve` owns the folder, an install through it is
 * verified in the background by the server's job worker.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { createRawPluginFolder } from '../plugins/raw-server.ts';
import { STAGE_ORDER } from '../../src/verification/types.ts';

describe('verify-report check through the real CLI', { timeout: 300_000 }, () => {
  let root: string;
  let env: Record<string, string>;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-verify-cli-'));
    chmodSync(root, 0o755);
    await createRawPluginFolder(root, 'echo-plugin');
    await createRawPluginFolder(root, 'second-plugin');
    env = {
      QUIVER_HOME: join(root, 'home'),
      QUIVER_DATA_DIR: join(root, 'home', 'data'),
      QUIVER_VERIFY_REGISTRY_URL: 'http://127.0.0.1:9',
      QUIVER_JOBS_POLL_MS: '100',
    };
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('a report checks with the public key and fails when one byte changes', async () => {
    const added = await runBinary(['plugin', 'add', join(root, 'echo-plugin'), '--name', 'echo-plugin'], env, 120_000);
    assert.equal(added.code, 0, added.stderr);
    const verified = await runBinary(['plugin', 'verify', 'echo-plugin', '--json'], env, 180_000);
    assert.equal(verified.code, 0, verified.stderr);
    for (const stage of STAGE_ORDER) assert.match(verified.stderr, new RegExp(`verify: ${stage} (…|\\d+)`), `progress of ${stage}`);
    const reportText = verified.stdout;
    const report = JSON.parse(reportText) as { overallScore: number; pluginId: string };
    assert.equal(report.pluginId, 'echo-plugin');
    const reportFile = join(root, 'report.json');
    writeFileSync(reportFile, reportText);
    const key = await runBinary(['verify-report', 'public-key'], env);
    assert.equal(key.code, 0, key.stderr);
    const keyFile = join(root, 'hub.pem');
    writeFileSync(keyFile, key.stdout);

    const good = await runBinary(['verify-report', 'check', reportFile, '--public-key', keyFile], env);
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /signature valid/);
    // Without --public-key the hub's own key is used.
    assert.equal((await runBinary(['verify-report', 'check', reportFile], env)).code, 0);

    // One byte of a value: the plugin name's first letter.
    const alteredFile = join(root, 'altered.json');
    const at = reportText.indexOf('"pluginId": "echo-plugin"') + '"pluginId": "'.length;
    writeFileSync(alteredFile, `${reportText.slice(0, at)}f${reportText.slice(at + 1)}`);
    assert.equal(readFileSync(alteredFile).length, Buffer.byteLength(reportText));
    const altered = await runBinary(['verify-report', 'check', alteredFile, '--public-key', keyFile], env);
    assert.equal(altered.code, 1);
    assert.match(altered.stderr, /INVALID: signature does not match the report content/);

    // Another key (a flipped signature byte and a file that is not JSON are unit-tested in signing.test.ts).
    const otherKey = join(root, 'other.pem');
    const { generateKeyPairSync } = await import('node:crypto');
    writeFileSync(otherKey, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const foreign = await runBinary(['verify-report', 'check', reportFile, '--public-key', otherKey, '--json'], env);
    assert.equal(foreign.code, 1);
    assert.equal(JSON.parse(foreign.stdout).valid, false);
  });

  it('while quiver serve runs, an install through it is verified in the background', async () => {
    const server = await startServe(['--http', '127.0.0.1:0'], env);
    try {
      const added = await runBinary(['plugin', 'add', join(root, 'second-plugin'), '--name', 'second-plugin'], env, 120_000);
      assert.equal(added.code, 0, added.stderr);
      let shown = await runBinary(['plugin', 'verification', 'second-plugin', '--json'], env);
      for (let i = 0; i < 60 && shown.code !== 0; i++) {
        await sleep(1000);
        shown = await runBinary(['plugin', 'verification', 'second-plugin', '--json'], env);
      }
      assert.equal(shown.code, 0, shown.stderr);
      const report = JSON.parse(shown.stdout) as { pluginId: string; stages: Record<string, unknown> };
      assert.equal(report.pluginId, 'second-plugin');
      assert.deepEqual(Object.keys(report.stages).sort(), [...STAGE_ORDER].sort());
      // `plugin verify` itself also runs inside the server and prints its progress.
      const forwarded = await runBinary(['plugin', 'verify', 'second-plugin'], env, 180_000);
      assert.equal(forwarded.code, 0, forwarded.stderr);
      assert.match(forwarded.stderr, /verify: source/);
      assert.match(forwarded.stdout, /^second-plugin \S+: score \d+/m);
    } finally {
      await stopChild(server.child);
    }
  });
});
