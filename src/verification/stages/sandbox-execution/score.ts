/**
 * @module verification/stages/sandbox-execution/score
 * The sandbox-execution score (seed 000 §4.2 stage 4) from one probe run. Start at 100 and
 * deduct, each finding an issue with a stable code:
 *
 * | finding                                              | code                         | deduction        |
 * |------------------------------------------------------|------------------------------|------------------|
 * | a remote plugin (nothing runs in the sandbox)        | `sandbox_remote`             | score 0          |
 * | never completed the handshake in the sandbox         | `sandbox_start_failed`       | score 0          |
 * | process ended during the run (per crash)             | `sandbox_crash`              | 20 each, ≤ 50    |
 * | share of read calls failing (error answer or crash)  | `sandbox_call_errors`        | 30 × share       |
 * | read call without an answer within the call timeout  | `sandbox_call_timeout`       | 5 each, ≤ 15     |
 * | any network attempt (TCP connect, UDP send, no route, a name refused by the empty allow-list) | `sandbox_network_attempt` | 30 (0, info, when the plugin declares a network need, as static analysis reads it) |
 * | a file written or deleted in its own code folder     | `sandbox_code_write`         | 15               |
 * | processes spawned after the handshake                | `sandbox_spawned_processes`  | 10 (20 if > 5)   |
 * | killed for memory (OOM)                              | `sandbox_out_of_memory`      | 25               |
 * | peak memory above half the limit                     | `sandbox_memory_spike`       | 10               |
 * | CPU above 80 % of one core over the run              | `sandbox_cpu_spike`          | 10               |
 * | p95 latency of read calls above 2 s                  | `sandbox_slow_calls`         | 5                |
 * | no tool could be called with valid arguments         | `sandbox_no_calls`           | 10               |
 *
 * Every tool is called (issue #23): reads (`valid`) are scored on their answers; other tools
 * (`exercise`) and the edge-value calls (`edge`: long strings, paths out of the folder,
 * loopback URLs) are scored only on what the sandbox saw them do — network attempts, writes,
 * processes, crashes — since an error answer to an edge value is the right answer. What this
 * cannot see: behaviour that waits for a trigger the probe never sends (a date, a phrase, the
 * hundredth call). Dormant code is beyond any pre-run check; runtime trust watches for it.
 *
 * Files the plugin keeps in its state folder are allowed (that is what it is for); /tmp is a
 * private tmpfs and vanishes with the sandbox. Measurements go to `metrics` for the report.
 */
import { percentile } from '../../../core/stats.ts';
import type { StageIssue, StageResult } from '../../types.ts';
import type { ProbeResult } from '../probe/types.ts';

function clampScore(value: number): number {
  return Math.max(0, Math.min(100, Math.round(value)));
}

/** Measurements of the run, for the report. */
export function sandboxMetrics(probe: ProbeResult): Record<string, unknown> {
  const valid = probe.calls.filter((call) => call.kind === 'valid');
  const latencies = valid.filter((call) => call.outcome !== 'timeout' && call.outcome !== 'crash').map((call) => call.latencyMs).sort((a, b) => a - b);
  return {
    started: probe.started,
    starts: probe.starts,
    startMs: probe.startMs ?? null,
    durationMs: probe.durationMs,
    toolsListed: probe.listing.tools.length,
    callsMade: valid.length,
    // Issue #23: every tool is called, reads scored on their answers, the rest observed only.
    toolsCalled: new Set(probe.calls.filter((call) => call.kind === 'valid' || call.kind === 'exercise').map((call) => call.tool)).size,
    exerciseCalls: probe.calls.filter((call) => call.kind === 'exercise').length,
    edgeCalls: probe.calls.filter((call) => call.kind === 'edge').length,
    callsSkipped: probe.skipped.length,
    outcomes: Object.fromEntries(['result', 'tool-error', 'protocol-error', 'timeout', 'crash'].map((outcome) => [outcome, valid.filter((call) => call.outcome === outcome).length])),
    latencyMs: latencies.length === 0 ? null : { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), max: latencies[latencies.length - 1] },
    crashes: probe.crashes.length,
    peakMemoryBytes: probe.resources.peakMemoryBytes ?? null,
    memoryLimitBytes: probe.resources.memoryLimitBytes ?? null,
    cpuMs: probe.resources.cpuMs ?? null,
    spawnedProcesses: probe.resources.spawnedProcesses,
    network: { source: probe.network.source, tcpConnects: probe.network.tcpConnects, udpDatagrams: probe.network.udpDatagrams, noRoute: probe.network.noRoute, refused: probe.network.refused },
    codeFolder: probe.writes.codeFolder,
    codeFolderWrites: probe.writes.written.length + probe.writes.deleted.length,
    stateFiles: probe.writes.stateFiles,
  };
}

type Finding = { deduct: number; issue: StageIssue };

function behaviourFindings(probe: ProbeResult): Finding[] {
  const findings: Finding[] = [];
  const valid = probe.calls.filter((call) => call.kind === 'valid');
  if (probe.crashes.length > 0) {
    const during = [...new Set(probe.crashes.flatMap((crash) => crash.during))];
    findings.push({
      deduct: Math.min(50, 20 * probe.crashes.length),
      issue: { severity: 'high', code: 'sandbox_crash', message: `the plugin process ended ${probe.crashes.length} time(s) during the run (${probe.crashes[0]!.reason})`, ...(during.length > 0 ? { location: during.map((tool) => `tool:${tool}`).join(',') } : {}) },
    });
  }
  const failed = valid.filter((call) => call.outcome === 'tool-error' || call.outcome === 'protocol-error' || call.outcome === 'crash');
  if (failed.length > 0) {
    findings.push({
      deduct: (30 * failed.length) / valid.length,
      issue: { severity: failed.length * 2 > valid.length ? 'medium' : 'low', code: 'sandbox_call_errors', message: `${failed.length} of ${valid.length} read calls with valid arguments failed (an error answer, or lost in a crash)`, location: [...new Set(failed.map((call) => `tool:${call.tool}`))].join(',') },
    });
  }
  const timeouts = valid.filter((call) => call.outcome === 'timeout');
  if (timeouts.length > 0) {
    findings.push({ deduct: Math.min(15, 5 * timeouts.length), issue: { severity: 'low', code: 'sandbox_call_timeout', message: `${timeouts.length} read call(s) gave no answer within the call timeout`, location: timeouts.map((call) => `tool:${call.tool}`).join(',') } });
  }
  const latencies = valid.filter((call) => call.outcome !== 'timeout' && call.outcome !== 'crash').map((call) => call.latencyMs).sort((a, b) => a - b);
  const p95 = percentile(latencies, 0.95) ?? 0;
  if (p95 > 2_000) findings.push({ deduct: 5, issue: { severity: 'low', code: 'sandbox_slow_calls', message: `read calls are slow: p95 ${Math.round(p95)} ms` } });
  if (!probe.calls.some((call) => call.kind === 'valid' || call.kind === 'exercise')) findings.push({ deduct: 10, issue: { severity: 'low', code: 'sandbox_no_calls', message: 'no tool could be called with valid arguments, so behaviour under calls was not observed' } });
  return findings;
}

function isolationFindings(probe: ProbeResult, networkDeclared: boolean): Finding[] {
  const findings: Finding[] = [];
  const { network, writes, resources } = probe;
  const attempts = network.tcpConnects + network.udpDatagrams + network.noRoute;
  if (attempts > 0 || network.refused.length > 0) {
    const names = network.refused.map((entry) => (entry.port === 0 ? entry.host : `${entry.host}:${entry.port}`));
    findings.push({
      // A plugin that declares its network need is expected to try (an admin grants egress).
      deduct: networkDeclared ? 0 : 30,
      issue: {
        severity: networkDeclared ? 'info' : 'high',
        code: 'sandbox_network_attempt',
        message: `the plugin tried to use the network${networkDeclared ? ' (declared)' : ''} in a sandbox without one (${network.tcpConnects} TCP connects, ${network.udpDatagrams} UDP datagrams, ${network.noRoute} unroutable packets${names.length > 0 ? `; refused: ${names.slice(0, 5).join(', ')}` : ''})`,
        ...(names.length > 0 ? { location: names.slice(0, 20).join(',') } : {}),
      },
    });
  }
  const changed = [...writes.written, ...writes.deleted.map((path) => `${path} (deleted)`)];
  if (changed.length > 0) {
    findings.push({ deduct: 15, issue: { severity: 'medium', code: 'sandbox_code_write', message: `the plugin changed ${changed.length} file(s) in its own code folder: ${changed.slice(0, 5).join(', ')}${changed.length > 5 ? '…' : ''}`, location: changed.slice(0, 20).join(',') } });
  }
  if (resources.spawnedProcesses > 0) {
    findings.push({ deduct: resources.spawnedProcesses > 5 ? 20 : 10, issue: { severity: 'medium', code: 'sandbox_spawned_processes', message: `the plugin started ${resources.spawnedProcesses} process(es) while serving calls` } });
  }
  if (resources.oomKills > 0) findings.push({ deduct: 25, issue: { severity: 'high', code: 'sandbox_out_of_memory', message: 'the kernel killed the plugin for exceeding its memory limit' } });
  else if (resources.peakMemoryBytes !== undefined && resources.memoryLimitBytes !== undefined && resources.peakMemoryBytes > resources.memoryLimitBytes / 2) {
    findings.push({ deduct: 10, issue: { severity: 'medium', code: 'sandbox_memory_spike', message: `peak memory ${Math.round(resources.peakMemoryBytes / 1048576)} MiB is above half of the ${Math.round(resources.memoryLimitBytes / 1048576)} MiB limit` } });
  }
  if (resources.cpuMs !== undefined && probe.durationMs > 0 && resources.cpuMs > 0.8 * probe.durationMs) {
    findings.push({ deduct: 10, issue: { severity: 'medium', code: 'sandbox_cpu_spike', message: `${resources.cpuMs} ms of CPU in a ${probe.durationMs} ms run` } });
  }
  return findings;
}

function notMeasured(probe: ProbeResult): StageIssue[] {
  const issues: StageIssue[] = [];
  if (probe.resources.source === 'none') issues.push({ severity: 'info', code: 'sandbox_no_resource_data', message: 'no cgroups here: memory, CPU and processes were not measured' });
  if (probe.network.source === 'none') issues.push({ severity: 'info', code: 'sandbox_no_network_data', message: "the sandbox's network counters could not be read: network attempts were not measured" });
  if (probe.writes.codeFolder === 'read-only') issues.push({ severity: 'info', code: 'sandbox_code_folder_read_only', message: 'the code folder was read-only (no overlay here): writes into it failed and were not recorded' });
  return issues;
}

/** Scores one probe run for the sandbox-execution stage (`networkDeclared`: the plugin declares a network need). */
export function scoreSandboxExecution(probe: ProbeResult, options: { networkDeclared?: boolean } = {}): StageResult {
  if (probe.remote === true) {
    return {
      score: 0,
      issues: [{ severity: 'high', code: 'sandbox_remote', message: "a remote plugin runs outside Quiver's sandbox: its behaviour cannot be observed, so this stage cannot vouch for it (trust must be granted)" }],
      metrics: sandboxMetrics(probe),
    };
  }
  if (!probe.started) {
    return {
      score: 0,
      issues: [{ severity: 'critical', code: 'sandbox_start_failed', message: `the plugin did not start in the strictest sandbox: ${probe.startError ?? 'unknown reason'}` }],
      metrics: sandboxMetrics(probe),
    };
  }
  const findings = [...behaviourFindings(probe), ...isolationFindings(probe, options.networkDeclared === true)];
  const score = clampScore(100 - findings.reduce((sum, finding) => sum + finding.deduct, 0));
  // A plugin that tried the network without declaring it stays sandboxed with an allow-list
  // (COMMUNITY) whatever its score: the levels above run outside the sandbox (fail closed).
  const undeclaredNetwork = findings.some((finding) => finding.issue.code === 'sandbox_network_attempt' && finding.issue.severity !== 'info');
  const cap = undeclaredNetwork ? { cap: { level: 'COMMUNITY' as const, reason: 'the plugin tried to reach the network without declaring it' } } : {};
  return { score, issues: [...findings.map((finding) => finding.issue), ...notMeasured(probe)], ...cap, metrics: sandboxMetrics(probe) };
}
