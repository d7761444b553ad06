import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeSpec, sweepStaleProbeFolders } from './sandboxed-start.ts';

describe('sandboxed probe start', () => {
  it('sweeps the folders of probes whose process died, and only those', () => {
    const folder = mkdtempSync(join(tmpdir(), 'quiver-sweep-test-'));
    try {
      const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
      for (const name of [`quiver-probe-${dead}-abc`, `quiver-probe-${process.pid}-def`, 'quiver-probe-fixture-ghi', 'other']) mkdirSync(join(folder, name, 'state'), { recursive: true });
      assert.equal(sweepStaleProbeFolders(folder), 1);
      assert.equal(existsSync(join(folder, `quiver-probe-${dead}-abc`)), false);
      for (const name of [`quiver-probe-${process.pid}-def`, 'quiver-probe-fixture-ghi', 'other']) assert.ok(existsSync(join(folder, name)), name);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('forces the strictest trust level, its own state folder and no egress on any launch', () => {
    const spec = probeSpec({ transport: 'stdio', pluginId: 'p', pluginName: 'p', version: '1', trustLevel: 'OFFICIAL', command: 'node', stateDir: '/var/lib/real-state', egress: [{ host: 'api.example.com', port: 443 }] }, '/tmp/probe-state');
    assert.equal(spec.trustLevel, 'UNVERIFIED');
    assert.equal(spec.egress, undefined, 'granted egress does not reach the probe');
    assert.equal(spec.stateDir, '/tmp/probe-state');
  });
});
