/**
 * @module verification/stages/probe/run-probe
 * One probe run (issue #10, seed 000 §4.2 stages 4 and 6): start the plugin in the strictest
 * sandbox, exercise it (exercise.ts: paginated listing, reads, bad-argument calls), restarting
 * it after a crash, then stop it and collect resources, network counters and writes. A remote
 * plugin is exercised over HTTP with nothing to observe around it (remote-probe.ts). Never
 * throws for what the plugin does; the returned `ProbeResult` says it.
 */
import { setMaxListeners } from 'node:events';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { HostCapabilities } from '../../../runtime/host-detection.ts';
import type { UpstreamSpecInput } from '../../../runtime/types.ts';
import { exercise, type Exercised, type ExerciseOptions, type ProbeTarget } from './exercise.ts';
import { createPluginSessions, type SessionTotals } from './plugin-sessions.ts';
import { connectRemote } from './remote-probe.ts';
import { startSandboxed } from './sandboxed-start.ts';
import type { ProbeCall, ProbeResult } from './types.ts';

/** Limits of a probe run (defaults keep a typical npm server well under 30 s). */
export interface ProbeOptions extends ExerciseOptions {
  host: HostCapabilities;
  /** Handshake limit per start, ms (default 15 000). */
  startTimeoutMs?: number;
  /** Restarts after crashes (default 3). */
  maxRestarts?: number;
  /** The fetch of a remote plugin's connection (the SSRF guard, issue #27); absent: the platform's. */
  remoteFetch?: typeof fetch | undefined;
}

const emptyResult = (durationMs: number, startError: string): ProbeResult => ({
  started: false,
  startError,
  listing: { tools: [], pages: 0, duplicateNames: [], repeatedCursor: false },
  calls: [],
  skipped: [],
  crashes: [],
  starts: 0,
  resources: { source: 'none', spawnedProcesses: 0, oomKills: 0 },
  network: { source: 'none', tcpConnects: 0, udpDatagrams: 0, noRoute: 0, refused: [] },
  writes: { codeFolder: 'none', written: [], deleted: [], stateFiles: 0 },
  durationMs,
  warnings: [],
});

/** Runs the probe of one plugin launch: sandboxed for a local process, over HTTP for a remote one. */
export async function runProbe(launch: UpstreamSpecInput | null, options: ProbeOptions): Promise<ProbeResult> {
  if (launch === null) return emptyResult(0, 'the plugin has no launch to probe (not active, or a credential is missing)');
  // Every call in flight listens to the signal: more than Node's default of 10 is expected here.
  if (options.signal) setMaxListeners(64, options.signal);
  return launch.transport === 'stdio' ? probeSandboxed(launch, options) : probeRemote(launch, options);
}

async function probeSandboxed(launch: UpstreamSpecInput & { transport: 'stdio' }, options: ProbeOptions): Promise<ProbeResult> {
  const began = Date.now();
  const startTimeoutMs = options.startTimeoutMs ?? 15_000;
  let first;
  try {
    first = await startSandboxed(launch, { host: options.host, startTimeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    return emptyResult(Date.now() - began, (error as Error).message.slice(0, 600));
  }
  const startMs = Date.now() - began;
  // Read now: the v2 client (a 2026-07-28 plugin) forgets the server's identity when it closes.
  const identity = serverInfoOf(first.client);
  options.progress?.(`started in the sandbox in ${startMs} ms`);
  const sessions = createPluginSessions(first, launch, { host: options.host, startTimeoutMs, maxRestarts: options.maxRestarts ?? 3, ...(options.signal ? { signal: options.signal } : {}) });
  let exercised: Exercised;
  let totals: SessionTotals;
  try {
    exercised = await exercise(first, sessions, options);
  } finally {
    // Whatever happened above, no process, cgroup or folder of the probe outlives it.
    totals = await sessions.finish();
  }
  return { ...assemble(exercised, first, startMs, began), ...identity, launch: first.launch, ...totals, warnings: first.launch.warnings };
}

async function probeRemote(launch: UpstreamSpecInput & { transport: 'http' | 'openapi' }, options: ProbeOptions): Promise<ProbeResult> {
  const began = Date.now();
  let target;
  try {
    target = await connectRemote(launch, options.startTimeoutMs ?? 15_000, options.signal, options.remoteFetch);
  } catch (error) {
    return { ...emptyResult(Date.now() - began, (error as Error).message.slice(0, 600)), remote: true };
  }
  const startMs = Date.now() - began;
  const connected = target;
  const identity = serverInfoOf(connected.client); // before close (see probeSandboxed)
  let exercised: Exercised;
  try {
    // A remote or OpenAPI plugin's calls reach the real service: only its reads are called.
    exercised = await exercise(connected, { current: async () => (connected.isRunning() ? connected : undefined) }, { ...options, contained: false });
  } finally {
    await connected.close();
  }
  const empty = emptyResult(0, '');
  return {
    ...assemble(exercised, connected, startMs, began),
    ...identity,
    remote: true,
    starts: 1,
    resources: empty.resources,
    network: empty.network,
    writes: empty.writes,
    warnings: [
      launch.transport === 'openapi'
        ? "an OpenAPI plugin runs no third-party code: Quiver's generated server calls only its base URL's host; the API itself runs elsewhere, unobserved"
        : 'a remote plugin runs outside Quiver: its resources, network use and writes cannot be observed',
    ],
  };
}

/** The MCP half of a result, common to both kinds of plugin. */
function assemble(exercised: Exercised, target: ProbeTarget, startMs: number, began: number): Omit<ProbeResult, 'starts' | 'resources' | 'network' | 'writes' | 'warnings'> {
  const { listing, plan, calls, crashes } = exercised;
  const notRun = plan.calls.filter((_, index) => calls[index] === undefined).map((call) => ({ tool: call.tool, reason: `${call.kind} call not run: the time budget was spent, or the plugin ended and could not be restarted` }));
  return {
    started: true,
    ...(target.protocolVersion !== undefined ? { protocolVersion: target.protocolVersion } : {}),
    ...serverInfoOf(target.client),
    listing,
    calls: calls.filter((call): call is ProbeCall => call !== undefined),
    skipped: [...plan.skipped, ...notRun],
    crashes,
    startMs,
    durationMs: Date.now() - began,
  };
}

function serverInfoOf(client: Client): { serverInfo?: { name: string; version: string } } {
  const info = client.getServerVersion();
  return info ? { serverInfo: { name: info.name, version: info.version } } : {};
}

