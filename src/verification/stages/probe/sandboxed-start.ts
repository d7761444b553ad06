/**
 * @module verification/stages/probe/sandboxed-start
 * Starts one plugin process for the probe in the strictest sandbox whatever its trust level:
 * UNVERIFIED isolation (bubblewrap, no network, read-only host, cgroup limits), a fresh
 * throwaway state folder (so what it writes is only what this run wrote, and the plugin's
 * real state is never touched), the runtime's own launch builder and process transport, and
 * the runtime's own era-aware handshake (issue #24: a `server/discover` probe, then the 2025
 * `initialize` or the 2026-07-28 v2 client, exactly as the supervisor meets the plugin), so a
 * plugin that speaks only 2026-07-28 is probed like any other. It records the protocol version
 * the server answered, when the process ended, and its resources and network counters before
 * the cgroup goes away. Never runs a plugin unsandboxed: without bubblewrap the start fails.
 *
 * Where the host can build an allow-list namespace (runtime/sandbox-egress.ts), the plugin
 * runs behind an EMPTY allow-list: still no way out, but the DNS stub and the proxy name each
 * refused destination, which the report keeps beside the kernel's counts.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { cgroupName, type CgroupHandle } from '../../../runtime/cgroup.ts';
import { isolationPolicyFor } from '../../../runtime/isolation-policy.ts';
import { ProcessTransport, type ExitInfo } from '../../../runtime/process-transport.ts';
import { buildLaunch, type LaunchDescription } from '../../../runtime/sandbox.ts';
import { defaultSearchPath, type HostCapabilities } from '../../../runtime/host-detection.ts';
import { sandboxUid } from '../../../runtime/sandbox-identity.ts';
import { startSandboxEgress, type SandboxEgress } from '../../../runtime/sandbox-egress.ts';
import { stdioSpecSchema, type StdioSpec, type UpstreamSpecInput } from '../../../runtime/types.ts';
import { EraProbeClosed, type ProtocolEra } from '../../../runtime/upstream-connection.ts';
import type { ModernUpstreamClient } from '../../../runtime/modern-client.ts';
import { QUIVER_VERSION } from '../../../core/version.ts';
import { isAlive } from '../../../runtime/process-tree.ts';
import { removeContainer } from '../../../runtime/container.ts';
import { monitorCgroup, type ResourceMonitor, type ResourceSample } from './resource-monitor.ts';
import { monitorNetwork, type NetworkCounts, type NetworkMonitor } from './network-monitor.ts';

/** The transport, remembering the protocol version the client settled on in `initialize`. */
class ObservedTransport extends ProcessTransport {
  protocolVersion: string | undefined;
  /** A container plugin's engine and container (issue #26): removed by name once the process is closed. */
  container: { engine: string; name: string } | undefined;
  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }
  override async close(): Promise<void> {
    await super.close();
    if (this.container) await removeContainer(this.container.engine, this.container.name);
  }
}

/** One running start of the plugin. */
export interface SandboxedPlugin {
  client: Client;
  protocolVersion: string | undefined;
  /** The era the plugin was met in (a restart goes straight to it). */
  era: ProtocolEra;
  launch: LaunchDescription;
  /** The state folder of this start (audit it after `stop()`). */
  stateDir: string;
  /** Resolves when the process ends on its own (a crash): why. Never rejects. */
  ended: Promise<string>;
  isRunning(): boolean;
  /** Reads resources and network counters, then kills the process tree (idempotent). */
  stop(): Promise<{ resources: ResourceSample | undefined; network: NetworkCounts | undefined }>;
  /** The last few KB of stderr (plugin text: show it redacted and short). */
  stderrTail(): string;
  /** Destinations the empty allow-list refused (names looked up, proxy requests); empty without one. */
  refused(): Array<{ host: string; port: number }>;
}

/** How to start. */
export interface SandboxedStartOptions {
  host: HostCapabilities;
  /** Handshake time limit, ms. */
  startTimeoutMs: number;
  searchPath?: string;
  signal?: AbortSignal;
  /** The era already known (a restart's, or the launch's own); undefined: found by the probe. */
  era?: ProtocolEra | undefined;
}

/** The probe's name toward the plugin; it offers no capabilities (nothing would answer them). */
const probeIdentity = { clientInfo: { name: 'quiver-verification', version: QUIVER_VERSION }, capabilities: {} };

/** A fresh state folder the sandbox user can write, under a root it can traverse (named by our pid). */
function makeStateDir(host: HostCapabilities): { root: string; stateDir: string } {
  const root = mkdtempSync(join(tmpdir(), `quiver-probe-${process.pid}-`));
  chmodSync(root, 0o711);
  const stateDir = join(root, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  if (host.isRoot) chownSync(stateDir, sandboxUid, sandboxUid);
  return { root, stateDir };
}

/** The subject's launch, forced to UNVERIFIED with this run's state folder and no egress rules of its own. */
export function probeSpec(launch: UpstreamSpecInput & { transport: 'stdio' }, stateDir: string): StdioSpec {
  const { egress: _granted, ...rest } = launch;
  return stdioSpecSchema.parse({ ...rest, trustLevel: 'UNVERIFIED', stateDir });
}

function describeExit(info: ExitInfo | undefined, cgroup: CgroupHandle | undefined): string {
  let reason = !info ? 'the connection closed' : info.signal ? `killed by ${info.signal}` : `exited with code ${info.code}`;
  if ((cgroup?.oomKills() ?? 0) > 0) reason += ' (out of memory)';
  return reason;
}

/** Starts the plugin and completes the handshake; throws (with the stderr tail) when it cannot. */
export async function startSandboxed(launchInput: UpstreamSpecInput & { transport: 'stdio' }, options: SandboxedStartOptions): Promise<SandboxedPlugin> {
  try {
    return await startOnce(launchInput, options);
  } catch (error) {
    // A legacy plugin that exits on the `server/discover` probe: start it again and speak 2025 to it (as the supervisor does).
    if (!(error instanceof Error && error.cause instanceof EraProbeClosed) || options.era !== undefined || options.signal?.aborted) throw error;
    return startOnce(launchInput, { ...options, era: 'legacy' });
  }
}

async function startOnce(launchInput: UpstreamSpecInput & { transport: 'stdio' }, options: SandboxedStartOptions): Promise<SandboxedPlugin> {
  const { host } = options;
  if (!host.bubblewrap) throw new Error(`the probe needs the bubblewrap sandbox: ${host.bubblewrapProblem ?? 'bubblewrap is unavailable'}`);
  const { root, stateDir } = makeStateDir(host);
  const spec = probeSpec(launchInput, stateDir);
  const policy = isolationPolicyFor('UNVERIFIED', spec.limits);
  let cgroup: CgroupHandle | undefined;
  let transport: ObservedTransport | undefined;
  let egress: SandboxEgress | undefined;
  try {
    egress = host.egressNet ? await startSandboxEgress({ label: `verification-probe:${spec.pluginName}`, allow: [] }) : undefined;
    cgroup = host.cgroups.kind === 'none' ? undefined : host.cgroups.create(cgroupName(`probe${randomBytes(4).toString('hex')}`, 1), policy.limits!);
    const launch = buildLaunch(spec, {
      host,
      policy,
      stateDir,
      cgroupProcsFiles: cgroup?.procsFiles ?? [],
      searchPath: options.searchPath ?? defaultSearchPath,
      // The starting process's pid, like the state folder's name: whose probe a process is.
      marker: `verification-probe:${process.pid}:${spec.pluginName}`,
      dangerouslyAllowUnsandboxed: false,
      ...(egress ? { egress: egress.mount } : {}),
    });
    transport = new ObservedTransport({ command: launch.command, args: launch.args, env: launch.env, cwd: launch.cwd, ...(cgroup ? { cgroup } : {}), stopGraceMs: 300 });
    transport.container = launch.container;
    return await connect(transport, launch.description, { root, stateDir, cgroup, egress, options, era: spec.protocolEra });
  } catch (error) {
    const stderr = transport?.stderrTail.trim() ?? '';
    await transport?.close();
    if (!transport) await cgroup?.remove();
    await egress?.close();
    rmSync(root, { recursive: true, force: true });
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(stderr ? `${message}; stderr: ${stderr.slice(-400)}` : message, { cause: error });
  }
}

async function connect(
  transport: ObservedTransport,
  launch: LaunchDescription,
  context: { root: string; stateDir: string; cgroup: CgroupHandle | undefined; egress: SandboxEgress | undefined; options: SandboxedStartOptions; era: ProtocolEra | undefined },
): Promise<SandboxedPlugin> {
  const { cgroup, options } = context;
  let exit: ExitInfo | undefined;
  let running = true;
  let resources: ResourceMonitor | undefined = cgroup ? monitorCgroup(cgroup) : undefined;
  let network: NetworkMonitor | undefined;
  let readings: { resources: ResourceSample | undefined; network: NetworkCounts | undefined } | undefined;
  const read = () => (readings ??= { resources: resources?.finish(), network: network?.finish() });
  let resolveEnded!: (reason: string) => void;
  const ended = new Promise<string>((resolve) => (resolveEnded = resolve));
  transport.onexit = (info) => {
    exit = info;
  };
  const prepare = (client: Client): void => {
    client.onclose = () => {
      running = false;
      if (!exit?.requested) {
        // Read the peaks before anything removes the cgroup.
        read();
        resolveEnded(describeExit(exit, cgroup));
      }
    };
    client.onerror = () => undefined;
  };
  const abort = (): void => void transport.close();
  options.signal?.addEventListener('abort', abort, { once: true });
  let handshake: { client: Client; era: ProtocolEra };
  try {
    // The MCP client stacks load with the first probe (issue #28: an idle server makes none).
    const { stdioHandshake } = await import('../../../runtime/upstream-client.ts');
    handshake = await stdioHandshake(transport, options.era ?? context.era, { startTimeoutMs: options.startTimeoutMs, ...(options.signal ? { signal: options.signal } : {}) }, prepare, probeIdentity);
  } finally {
    options.signal?.removeEventListener('abort', abort);
  }
  const { client, era } = handshake;
  resources?.markBaseline();
  network = monitorNetwork(cgroup?.pids() ?? []);
  let stopping: Promise<{ resources: ResourceSample | undefined; network: NetworkCounts | undefined }> | undefined;
  return {
    client,
    // A 2026-07-28 plugin has no `initialize`: its version is the one the v2 client settled on.
    protocolVersion: era === 'modern' ? (client as ModernUpstreamClient).protocolVersion : transport.protocolVersion,
    era,
    launch,
    stateDir: context.stateDir,
    ended,
    isRunning: () => running,
    stderrTail: () => transport.stderrTail,
    refused: () => (context.egress?.decisions ?? []).filter((decision) => !decision.allowed).map(({ host, port }) => ({ host, port })),
    stop() {
      stopping ??= (async () => {
        const values = read();
        resources = undefined;
        await transport.close();
        await client.close().catch(() => undefined);
        await context.egress?.close();
        return values;
      })();
      return stopping;
    },
  };
}

/**
 * Removes probe folders left by a process that died mid-probe (a verification child killed at
 * its time limit cannot clean up): `quiver-probe-<pid>-…` whose pid is gone. Returns how many.
 */
export function sweepStaleProbeFolders(folder = tmpdir()): number {
  let removed = 0;
  for (const name of readdirSync(folder)) {
    const match = /^quiver-probe-(\d+)-/.exec(name);
    if (!match || isAlive(Number(match[1]))) continue;
    rmSync(join(folder, name), { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}

/** Removes a start's temporary folders (after `stop()` and the write audit). */
export function removeStateRoot(stateDir: string): void {
  rmSync(join(stateDir, '..'), { recursive: true, force: true });
}
