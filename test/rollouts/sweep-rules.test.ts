/**
 * The folder sweep's pure rules (issue #29): which paths it may ever delete (fail closed), why a
 * folder stays (database holds, a running process, a recent call, a recent install touch), and
 * its configuration (a sweep interval of 0 turns it off; below a second is refused).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { keepReasons, labelKey, type FolderReference } from '../../src/rollouts/folder-usage.ts';
import { isVersionFolder } from '../../src/rollouts/index.ts';

const none = { running: new Set<string>(), recentlyCalled: new Set<string>(), touchedRecently: false };

describe('folder sweep rules', () => {
  it('deletes only <cache>/<kind>/<name>, never the cache, a dot folder, or anything outside', () => {
    assert.equal(isVersionFolder('/q/plugins', '/q/plugins/git/abc123'), true);
    assert.equal(isVersionFolder('/q/plugins', '/q/plugins/npm/pkg@1.0.0'), true);
    for (const path of ['/q/plugins', '/q/plugins/git', '/q/plugins/.staging/x', '/q/plugins/.trash/x', '/q/plugins/git/a/b', '/q/other/git/a', '/q/plugins/git/../../etc', 'plugins/git/a']) {
      assert.equal(isVersionFolder('/q/plugins', path), false, path);
    }
  });

  it('a folder stays for any holder: a row, a process of one of its versions, a recent call, a recent touch', () => {
    const released: FolderReference = { folder: '/f', pluginId: 'p', labels: ['2.0.0', '2.0.0+green'], holds: null };
    assert.deepEqual(keepReasons([released], none), [], 'history alone holds nothing');
    assert.deepEqual(keepReasons([{ ...released, holds: 'the blue slot serves from it' }], none), ['the blue slot serves from it']);
    assert.match(keepReasons([released], { ...none, running: new Set([labelKey('p', '2.0.0+green')]) })[0] ?? '', /process of version 2\.0\.0\+green/);
    assert.match(keepReasons([released], { ...none, recentlyCalled: new Set([labelKey('p', '2.0.0')]) })[0] ?? '', /called recently/);
    assert.deepEqual(keepReasons([released], { ...none, running: new Set([labelKey('other', '2.0.0')]) }), [], "another plugin's process of the same label does not hold it");
    assert.match(keepReasons([], { ...none, touchedRecently: true })[0] ?? '', /install placed or reused it/);
  });

  it('is configured in milliseconds: 0 turns the sweep off, under a second is refused', () => {
    const config = loadConfig({ QUIVER_ROLLOUT_FOLDER_RETENTION_MS: '0', QUIVER_ROLLOUT_SWEEP_INTERVAL_MS: '0' });
    assert.equal(config.rollouts.folderRetentionMs, 0);
    assert.equal(config.rollouts.sweepIntervalMs, 0);
    assert.equal(loadConfig({}).rollouts.folderRetentionMs, 7 * 86_400_000);
    assert.throws(() => loadConfig({ QUIVER_ROLLOUT_SWEEP_INTERVAL_MS: '5' }), /QUIVER_ROLLOUT_SWEEP_INTERVAL_MS: expected 0 \(no sweep\) or at least 1000 ms/);
  });
});
