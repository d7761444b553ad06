/**
 * The sandbox-execution and compatibility stages (issue #10) against real plugins in the real
 * sandbox: the fixture corpus (probe-fixtures.ts) and the real npm servers installed in
 * node_modules (server-everything, -memory, -sequential-thinking). Needs bubblewrap, cgroups
 * and the code overlay: on a machine without them the suite skips, under CI it fails.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/core/logger.ts';
import { detectHost, type HostCapabilities } from '../../src/runtime/host-detection.ts';
import { supervisorMarkerName } from '../../src/runtime/sandbox-identity.ts';
import { processesWithEnv } from '../../src/runtime/process-tree.ts';
import { createProbeRunner, type ProbeRunner } from '../../src/verification/stages/probe/index.ts';
import { createSandboxExecutionStage } from '../../src/verification/stages/sandbox-execution/index.ts';
import { createCompatibilityStage } from '../../src/verification/stages/compatibility/index.ts';
import type { StageContext, StageResult, VerificationSubject } from '../../src/verification/types.ts';
import { skipUnless } from '../helpers/requirements.ts';
import { corpus, createFixture } from './probe-fixtures.ts';

const host: HostCapabilities = detectHost();
const missing = host.bubblewrapProblem ?? (host.cgroups.kind === 'none' ? `cgroups are unusable: ${host.cgroups.reason}` : undefined) ?? (host.overlay ? undefined : `the code overlay is unusable: ${host.overlayProblem}`);
const skip = skipUnless(missing);

function contextFor(subject: VerificationSubject): StageContext {
  return { subject, settings: { registryUrl: 'https://registry.npmjs.org', licenseAllowList: [], stageTimeoutMs: 60_000 }, logger: silentLogger, signal: new AbortController().signal, progress: () => undefined };
}

/** Runs both stages on one subject with one runner; the probe must run once for both. */
async function verify(subject: VerificationSubject, runner: ProbeRunner = createProbeRunner({ host })): Promise<{ sandbox: StageResult; compat: StageResult; runner: ProbeRunner; context: StageContext }> {
  const context = contextFor(subject);
  const [sandbox, compat] = await Promise.all([createSandboxExecutionStage(runner)(context), createCompatibilityStage(runner)(context)]);
  return { sandbox, compat, runner, context };
}

const codes = (result: StageResult) => result.issues.map((issue) => issue.code);
// Only this process's probes: the runner names its folders `quiver-probe-<pid>-…`, and other test files
// probing at the same time (two run at once) must not count as this file's leak.
const probeTempFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith(`quiver-probe-${process.pid}-`));

describe('verification probe stages in the real sandbox', { skip }, () => {
  let foldersBefore: string[];
  before(() => {
    foldersBefore = probeTempFolders();
  });

  it('scores a benign plugin high on both stages, calling every tool, following pagination, once for both stages', { timeout: 60_000 }, async () => {
    const { sandbox, compat, runner, context } = await verify(await createFixture(corpus.benign));
    const probe = await runner.probe(context);
    assert.equal(probe.starts, 1);
    assert.equal(probe.listing.pages, 3, 'five tools served two per page');
    assert.equal(probe.listing.tools.length, 5);
    const called = [...new Set(probe.calls.filter((call) => call.kind === 'valid').map((call) => call.tool))].sort();
    assert.deepEqual(called, ['echo', 'get_weather', 'list_notes']);
    // Issue #23: the tools that are not reads are called too, in the throwaway sandbox (observed, not scored on their answers).
    assert.deepEqual([...new Set(probe.calls.filter((call) => call.kind === 'exercise').map((call) => call.tool))].sort(), ['delete_note', 'send_note']);
    assert.deepEqual(probe.skipped, []);
    assert.ok(probe.calls.some((call) => call.kind === 'edge'), 'edge-value calls were made');
    assert.ok(probe.calls.filter((call) => call.kind === 'valid').every((call) => call.outcome === 'result'), JSON.stringify(probe.calls));
    const bad = probe.calls.filter((call) => call.kind === 'missing-required' || call.kind === 'wrong-type');
    assert.ok(bad.length > 0, 'bad-argument calls were made');
    assert.ok(bad.every((call) => call.outcome === 'tool-error'));
    assert.ok((probe.resources.peakMemoryBytes ?? 0) > 1_000_000, 'peak memory read from the cgroup');
    assert.ok((probe.resources.cpuMs ?? -1) >= 0);
    assert.equal(probe.network.source, 'netns-counters');
    assert.equal(probe.network.tcpConnects + probe.network.udpDatagrams + probe.network.noRoute, 0);
    assert.deepEqual(probe.network.refused, []);
    assert.deepEqual(probe.writes.written, []);
    assert.ok(sandbox.score >= 90, `sandbox ${sandbox.score}: ${codes(sandbox)}`);
    assert.ok(compat.score >= 90, `compat ${compat.score}: ${codes(compat)}`);
    assert.equal(compat.metrics?.listPages, 3);
  });

  it('deducts crashes of a plugin that crashes on half its calls and restarts it to go on', { timeout: 60_000 }, async () => {
    // One call at a time, so that each crash is one tool's and the order of events is fixed.
    const { sandbox, runner, context } = await verify(await createFixture(corpus.crashy), createProbeRunner({ host, concurrency: 1 }));
    const probe = await runner.probe(context);
    const outcomes = Object.fromEntries(probe.calls.filter((call) => call.kind === 'valid').map((call) => [call.tool, call.outcome]));
    assert.deepEqual(outcomes, { get_a: 'result', get_b: 'crash', get_c: 'result', get_d: 'crash', get_e: 'result', get_f: 'crash', get_g: 'result', get_h: 'crash' });
    assert.deepEqual(probe.crashes.map((crash) => crash.during), [['get_b'], ['get_d'], ['get_f'], ['get_h']]);
    assert.equal(probe.starts, 4, 'the first start and three restarts');
    assert.ok(codes(sandbox).includes('sandbox_crash'));
    // Four Node starts in under a second can also read as a CPU spike on a loaded machine: a real
    // measurement, deducted on its own line, so the expected score names it when it is there.
    const cpuSpike = codes(sandbox).includes('sandbox_cpu_spike') ? 10 : 0;
    assert.equal(sandbox.score, 100 - 50 - 15 - cpuSpike, `crashes (capped at 50) and half the reads failed (30 × 4/8); issues: ${codes(sandbox)}`);
  });

  it('sees the network attempts of a plugin that phones home, though nothing leaves the sandbox', { timeout: 60_000 }, async () => {
    const { sandbox, runner, context } = await verify(await createFixture(corpus.phoneHome));
    const probe = await runner.probe(context);
    assert.ok(probe.network.tcpConnects >= 1, `loopback connect counted: ${JSON.stringify(probe.network)}`);
    assert.ok(probe.network.noRoute >= 1, `public address counted: ${JSON.stringify(probe.network)}`);
    assert.ok(probe.network.udpDatagrams >= 1, `DNS lookup counted: ${JSON.stringify(probe.network)}`);
    if (host.egressNet) assert.ok(probe.network.refused.some((entry) => entry.host === 'telemetry.example.com'), `the looked-up name is reported: ${JSON.stringify(probe.network.refused)}`);
    assert.ok(codes(sandbox).includes('sandbox_network_attempt'));
    assert.ok(sandbox.score <= 70, `sandbox ${sandbox.score}`);
  });

  it('calls a tool named neither as a read nor annotated, and sees its network attempts (issue #23)', { timeout: 60_000 }, async () => {
    const { sandbox, runner, context } = await verify(await createFixture(corpus.probeTool));
    const probe = await runner.probe(context);
    assert.ok(probe.calls.some((call) => call.tool === 'probe' && call.kind === 'exercise'), JSON.stringify(probe.calls));
    assert.ok(probe.network.tcpConnects + probe.network.noRoute + probe.network.udpDatagrams >= 1, JSON.stringify(probe.network));
    assert.ok(codes(sandbox).includes('sandbox_network_attempt'));
    assert.equal(sandbox.cap?.level, 'COMMUNITY');
  });

  it('notes without deducting the network attempts of a plugin that declares its network need', { timeout: 60_000 }, async () => {
    const subject = { ...(await createFixture(corpus.phoneHome)), manifest: { network: true } };
    const { sandbox } = await verify(subject);
    const issue = sandbox.issues.find((candidate) => candidate.code === 'sandbox_network_attempt');
    assert.equal(issue?.severity, 'info');
    assert.equal(sandbox.score, 100, JSON.stringify(sandbox.issues));
  });

  it('finds a write into the code folder in the overlay, and the installed folder stays untouched', { timeout: 60_000 }, async () => {
    const subject = await createFixture(corpus.writer);
    const { sandbox, runner, context } = await verify(subject);
    const probe = await runner.probe(context);
    assert.deepEqual(probe.writes.written, ['cache.json']);
    assert.deepEqual(probe.writes.deleted, ['notes.txt']);
    assert.equal(existsSync(join(subject.codeDir!, 'cache.json')), false);
    assert.equal(existsSync(join(subject.codeDir!, 'notes.txt')), true);
    assert.ok(codes(sandbox).includes('sandbox_code_write'));
    assert.ok(sandbox.score < 90);
  });

  it('counts the processes a plugin spawns while serving a call', { timeout: 60_000 }, async () => {
    const { sandbox, runner, context } = await verify(await createFixture(corpus.spawner));
    const probe = await runner.probe(context);
    assert.ok(probe.resources.spawnedProcesses >= 1, JSON.stringify(probe.resources));
    assert.ok(codes(sandbox).includes('sandbox_spawned_processes'));
  });

  it('fails the compatibility of a plugin whose output breaks its outputSchema and that crashes on bad arguments', { timeout: 60_000 }, async () => {
    const { compat } = await verify(await createFixture(corpus.badContract));
    assert.ok(codes(compat).includes('compat_output_mismatch'), String(codes(compat)));
    assert.ok(codes(compat).includes('compat_bad_args_crash'), String(codes(compat)));
    assert.ok(compat.score < 70, `compat ${compat.score}`);
  });

  it('scores 0 on both stages when the plugin does not start', { timeout: 60_000 }, async () => {
    const { sandbox, compat } = await verify(await createFixture(corpus.deadOnStart));
    assert.equal(sandbox.score, 0);
    assert.equal(compat.score, 0);
    assert.deepEqual(codes(sandbox), ['sandbox_start_failed']);
    assert.match(sandbox.issues[0]!.message, /refusing to start/);
    assert.deepEqual(codes(compat), ['compat_handshake_failed']);
  });

  for (const name of ['server-everything', 'server-memory', 'server-sequential-thinking']) {
    it(`scores the real ${name} at least 70 on both stages`, { timeout: 90_000 }, async () => {
      const folder = join(process.cwd(), 'node_modules', '@modelcontextprotocol', name);
      const launch = { transport: 'stdio' as const, pluginId: name, pluginName: name, version: '0', trustLevel: 'OFFICIAL' as const, command: process.execPath, args: ['dist/index.js'], cwd: folder, codeDir: folder, readOnlyPaths: [join(process.cwd(), 'node_modules')] };
      const subject: VerificationSubject = { pluginId: name, pluginName: name, version: '0', sourceType: 'npm', source: {}, codeDir: folder, manifest: null, intelligence: null, tools: [], otherToolNames: [], launch };
      const began = Date.now();
      const { sandbox, compat, runner, context } = await verify(subject);
      const probe = await runner.probe(context);
      assert.ok(probe.started, probe.startError);
      assert.ok(probe.calls.some((call) => call.kind === 'valid' && call.outcome === 'result'));
      // Issue #23: every tool is called (with valid arguments where they could be generated), within 30 s for both stages.
      const called = new Set(probe.calls.filter((call) => call.kind === 'valid' || call.kind === 'exercise').map((call) => call.tool));
      const uncalled = probe.listing.tools.filter((tool) => !called.has(tool.name) && !probe.skipped.some((entry) => entry.tool === tool.name && /no valid arguments/.test(entry.reason)));
      assert.deepEqual(uncalled.map((tool) => tool.name), []);
      assert.ok(Date.now() - began <= 30_000, `${Date.now() - began} ms`);
      if (name === 'server-everything') {
        // Issue #23: every tool is called now, and its gzip tool fetches a file from GitHub by default: seen, refused, capped.
        assert.ok(sandbox.issues.some((issue) => issue.code === 'sandbox_network_attempt' && /raw\.githubusercontent\.com/.test(issue.message)), JSON.stringify(sandbox.issues));
        assert.equal(sandbox.cap?.level, 'COMMUNITY');
        assert.ok(sandbox.score >= 60, `sandbox ${sandbox.score}: ${JSON.stringify(sandbox.issues)}`);
      } else assert.ok(sandbox.score >= 70, `sandbox ${sandbox.score}: ${JSON.stringify(sandbox.issues)}`);
      assert.ok(compat.score >= 70, `compat ${compat.score}: ${JSON.stringify(compat.issues)}`);
      console.log(`${name}: sandboxExecution ${sandbox.score}, compatibility ${compat.score}, probe ${probe.durationMs} ms (start ${probe.startMs} ms), both stages ${Date.now() - began} ms, peak ${Math.round((probe.resources.peakMemoryBytes ?? 0) / 1048576)} MiB, cpu ${probe.resources.cpuMs} ms`);
    });
  }

  it('leaves no probe process or temporary folder behind', () => {
    const names = [...Object.values(corpus).map((fixture) => fixture.name), 'server-everything', 'server-memory', 'server-sequential-thinking'];
    assert.deepEqual(names.flatMap((name) => processesWithEnv(supervisorMarkerName, `verification-probe:${process.pid}:${name}`)), []);
    assert.deepEqual(probeTempFolders().filter((name) => !foldersBefore.includes(name)), []);
  });
});
