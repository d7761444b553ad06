import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanProbe } from '../../../../test/verification/clean-probe.ts';
import { scoreSandboxExecution } from './score.ts';

const codes = (probe: Parameters<typeof scoreSandboxExecution>[0]) => scoreSandboxExecution(probe).issues.map((issue) => issue.code);

describe('sandbox-execution score', () => {
  it('gives a clean run 100 with its measurements', () => {
    const result = scoreSandboxExecution(cleanProbe());
    assert.equal(result.score, 100);
    assert.deepEqual(result.issues, []);
    assert.equal(result.metrics?.callsMade, 2);
    assert.equal(result.metrics?.peakMemoryBytes, 40 << 20);
  });

  it('gives 0 to a plugin that does not start', () => {
    const result = scoreSandboxExecution(cleanProbe({ started: false, startError: 'exited with code 4' }));
    assert.equal(result.score, 0);
    assert.equal(result.issues[0]?.severity, 'critical');
    assert.match(result.issues[0]!.message, /exited with code 4/);
  });

  it('deducts each finding by the documented amount', () => {
    const base = cleanProbe();
    const cases: Array<[Partial<typeof base>, string | string[], number]> = [
      [{ crashes: [{ reason: 'exited with code 1', during: ['echo'] }], calls: [{ tool: 'echo', kind: 'valid', outcome: 'crash', latencyMs: 2 }, base.calls[1]!] }, ['sandbox_crash', 'sandbox_call_errors'], 100 - 20 - 15],
      [{ network: { source: 'netns-counters', tcpConnects: 1, udpDatagrams: 0, noRoute: 0, refused: [] } }, 'sandbox_network_attempt', 70],
      [{ network: { source: 'netns-counters', tcpConnects: 0, udpDatagrams: 0, noRoute: 0, refused: [{ host: 'telemetry.example.com', port: 0 }] } }, 'sandbox_network_attempt', 70],
      [{ writes: { codeFolder: 'overlay', written: ['cache.json'], deleted: [], stateFiles: 0 } }, 'sandbox_code_write', 85],
      [{ resources: { ...base.resources, spawnedProcesses: 1 } }, 'sandbox_spawned_processes', 90],
      [{ resources: { ...base.resources, spawnedProcesses: 6 } }, 'sandbox_spawned_processes', 80],
      [{ resources: { ...base.resources, oomKills: 1 } }, 'sandbox_out_of_memory', 75],
      [{ resources: { ...base.resources, peakMemoryBytes: 300 << 20 } }, 'sandbox_memory_spike', 90],
      [{ resources: { ...base.resources, cpuMs: 900 } }, 'sandbox_cpu_spike', 90],
      [{ calls: [{ tool: 'echo', kind: 'valid', outcome: 'timeout', latencyMs: 5_000 }, base.calls[1]!] }, 'sandbox_call_timeout', 95],
      [{ calls: [{ tool: 'echo', kind: 'valid', outcome: 'tool-error', latencyMs: 2 }, base.calls[1]!] }, 'sandbox_call_errors', 85],
      [{ calls: [{ tool: 'echo', kind: 'valid', outcome: 'result', latencyMs: 2_500 }] }, 'sandbox_slow_calls', 95],
      [{ calls: [] }, 'sandbox_no_calls', 90],
    ];
    for (const [override, code, score] of cases) {
      const result = scoreSandboxExecution(cleanProbe(override));
      const expected = Array.isArray(code) ? code : [code];
      assert.deepEqual(result.issues.map((issue) => issue.code), expected);
      assert.equal(result.score, score, String(code));
    }
  });

  it('ignores bad-argument calls (the compatibility stage judges them) and says what it could not measure', () => {
    assert.deepEqual(codes(cleanProbe({ calls: [...cleanProbe().calls, { tool: 'echo', kind: 'wrong-type', outcome: 'crash', latencyMs: 1 }] })), []);
    const unmeasured = cleanProbe({ resources: { source: 'none', spawnedProcesses: 0, oomKills: 0 }, network: { source: 'none', tcpConnects: 0, udpDatagrams: 0, noRoute: 0, refused: [] }, writes: { codeFolder: 'read-only', written: [], deleted: [], stateFiles: 0 } });
    assert.deepEqual(codes(unmeasured), ['sandbox_no_resource_data', 'sandbox_no_network_data', 'sandbox_code_folder_read_only']);
    assert.equal(scoreSandboxExecution(unmeasured).score, 100);
  });

  it('notes without deducting the network attempts of a plugin that declares a network need', () => {
    const probe = cleanProbe({ network: { source: 'netns-counters', tcpConnects: 2, udpDatagrams: 1, noRoute: 0, refused: [{ host: 'api.example.com', port: 0 }] } });
    const declared = scoreSandboxExecution(probe, { networkDeclared: true });
    assert.equal(declared.score, 100);
    assert.deepEqual(declared.issues.map((issue) => [issue.code, issue.severity]), [['sandbox_network_attempt', 'info']]);
    assert.match(declared.issues[0]!.message, /\(declared\).*api\.example\.com/);
    assert.equal(declared.cap, undefined, 'a declared need is not capped: an admin grants its egress');
    const undeclared = scoreSandboxExecution(probe);
    assert.equal(undeclared.score, 70);
    // Undeclared network use keeps the plugin sandboxed whatever its score.
    assert.deepEqual(undeclared.cap, { level: 'COMMUNITY', reason: 'the plugin tried to reach the network without declaring it' });
  });

  it('gives 0 to a remote plugin, whose behaviour it cannot observe', () => {
    const result = scoreSandboxExecution(cleanProbe({ remote: true }));
    assert.equal(result.score, 0);
    assert.deepEqual(result.issues.map((issue) => issue.code), ['sandbox_remote']);
    assert.equal(result.metrics?.callsMade, 2);
  });

  it('never goes below 0', () => {
    const worst = cleanProbe({
      crashes: [1, 2, 3].map(() => ({ reason: 'killed by SIGKILL', during: [] })),
      calls: [{ tool: 'echo', kind: 'valid', outcome: 'crash', latencyMs: 1 }],
      network: { source: 'netns-counters', tcpConnects: 3, udpDatagrams: 1, noRoute: 2, refused: [] },
      writes: { codeFolder: 'overlay', written: ['a'], deleted: ['b'], stateFiles: 0 },
      resources: { source: 'cgroup', spawnedProcesses: 9, oomKills: 1, cpuMs: 5_000 },
    });
    assert.equal(scoreSandboxExecution(worst).score, 0);
  });
});
