/**
 * @module runtime/supervisor/launcher
 * Turns a spec into a live MCP connection (DESIGN §3.6 isolation): remote plugins over HTTP;
 * local ones through the trust level's isolation policy — bubblewrap at every level (issue
 * #23), a cgroup with the policy's memory/cpu/pids limits when cgroups are writable, and a
 * writable state folder per plugin, owned by the sandbox user. The hub's own paths (its home,
 * data folder and key file, from `SandboxOptions.hiddenPaths`, and the state root holding other
 * plugins' folders) are masked wherever a folder given to a plugin contains them. Owns the host
 * probe (run once, sweeping cgroups an earlier Quiver left) and the temporary state root it
 * creates when none is configured.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../core/logger.ts';
import { cgroupName, type CgroupHandle } from '../cgroup.ts';
import { removeContainer, sweepOrphanContainers } from '../container.ts';
import { isolationPolicyFor } from '../isolation-policy.ts';
import type { Redactor } from '../redact.ts';
import { buildLaunch, type LaunchDescription } from '../sandbox.ts';
import { createHostProbe, defaultSearchPath, type HostCapabilities } from '../host-detection.ts';
import { sandboxUid } from '../sandbox-identity.ts';
import { startSandboxEgress, type SandboxEgress } from '../sandbox-egress.ts';
import { pluginStateDir } from '../state-dir.ts';
import type { Clock, ResourceLimits, StdioSpec, UpstreamSpec } from '../types.ts';
import type { UpstreamConnection } from '../upstream-connection.ts';
import type { SandboxOptions } from './api.ts';

/** What the launcher needs from the supervisor. */
export interface LauncherOptions {
  /** The supervisor's id: set in every process it starts and part of every cgroup name. */
  supervisorId: string;
  sandbox: SandboxOptions;
  startTimeoutMs: number;
  stopGraceMs: number;
  clock: Clock;
  logger: Logger;
  /** OAuth access tokens of remote plugins by URL (issue #27); absent: static headers only. */
  remoteAuthorization?: ((url: string, owner: string | undefined) => Promise<string | undefined>) | undefined;
  /** The fetch of remote plugins' connections (the SSRF guard, issue #27); absent: the platform's. */
  remoteFetch?: typeof fetch | undefined;
}

/** Options of one launch. */
export interface LaunchOptions {
  redact: Redactor;
  signal?: AbortSignal;
  /** Told how a local process is launched, before its handshake (so a failed start still reports it). */
  onLaunch?(description: LaunchDescription): void;
}

/** Starts plugin connections. */
export interface Launcher {
  /** What the host offers for isolation (probed on first use). */
  host(): HostCapabilities;
  /** Launches (or reaches) the plugin and completes the MCP handshake within `startTimeoutMs`. */
  connect(spec: UpstreamSpec, options: LaunchOptions): Promise<UpstreamConnection>;
  /** Removes the state root if the launcher created it. */
  dispose(): void;
}

/** Creates a launcher; nothing is probed or created until the first launch. */
export function createLauncher(options: LauncherOptions): Launcher {
  const { sandbox, startTimeoutMs, stopGraceMs, clock, logger } = options;
  const searchPath = sandbox.searchPath ?? defaultSearchPath;
  let stateRoot = sandbox.stateRoot;
  let ownsStateRoot = false;
  let launches = 0;
  let containersSwept = false;

  // Probed once, stale cgroups swept then. A launch waits for the probe without blocking the event
  // loop (two short sandboxes, tens of ms, ~160 ms on a loaded machine), so a server keeps serving.
  const hostProbe = createHostProbe({ bubblewrapPath: sandbox.bubblewrapPath, searchPath, useCgroups: sandbox.useCgroups, codeOverlay: sandbox.codeOverlay }, (found) => {
    const swept = found.cgroups.sweepStale();
    if (swept > 0) logger.info({ swept }, 'removed cgroups left by an earlier Quiver process');
  });
  const host = (): HostCapabilities => hostProbe.now();

  function stateDirFor(spec: StdioSpec): string {
    let directory = spec.stateDir;
    if (!directory) {
      if (!stateRoot) {
        stateRoot = mkdtempSync(join(tmpdir(), 'quiver-runtime-'));
        // Traversable (not listable) by the sandbox user, who must reach its own folder inside.
        chmodSync(stateRoot, 0o711);
        ownsStateRoot = true;
      } else {
        // A configured root may not exist yet; a recursive mkdir below would create it 0700,
        // hiding every plugin folder from the sandbox user.
        mkdirSync(stateRoot, { recursive: true, mode: 0o711 });
      }
      directory = pluginStateDir(stateRoot, spec.pluginId);
    }
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    // Every plugin runs as `nobody` on the host (issue #23); its own folder must be writable by it.
    if (host().isRoot) chownSync(directory, sandboxUid, sandboxUid);
    return directory;
  }

  /** A cgroup with the policy's limits, or none when the host has no writable cgroups. */
  function cgroupFor(spec: StdioSpec, limits: Required<ResourceLimits> | undefined): CgroupHandle | undefined {
    const capabilities = host();
    launches += 1;
    if (!limits || capabilities.cgroups.kind === 'none') return undefined;
    try {
      return capabilities.cgroups.create(cgroupName(options.supervisorId, launches), limits);
    } catch (error) {
      logger.warn({ pluginId: spec.pluginId, error: (error as Error).message }, 'cannot create a cgroup; falling back');
      return undefined;
    }
  }

  async function connectLocal(spec: StdioSpec, launchOptions: LaunchOptions): Promise<UpstreamConnection> {
    const capabilities = await hostProbe.ready();
    const policy = isolationPolicyFor(spec.trustLevel, { ...sandbox.defaultLimits, ...spec.limits }, { egressRules: (spec.egress?.length ?? 0) > 0 });
    const stateDir = stateDirFor(spec);
    if (spec.container !== undefined && !containersSwept) {
      // Once, at the first container launch (the engine is probed then anyway): containers an
      // earlier Quiver left when it was killed.
      containersSwept = true;
      const containers = sweepOrphanContainers(searchPath);
      if (containers > 0) logger.info({ containers }, 'removed plugin containers left by an earlier Quiver process');
    }
    // A container's limits and network are the engine's flags (runtime/container.ts).
    const cgroup = spec.container === undefined ? cgroupFor(spec, policy.limits) : undefined;
    let launch;
    let egress: SandboxEgress | undefined;
    try {
      egress = await egressFor(spec, spec.container === undefined && policy.network === 'allow-list' && capabilities.bubblewrap !== undefined);
      launch = buildLaunch(spec, {
        host: capabilities,
        policy,
        stateDir,
        cgroupProcsFiles: cgroup?.procsFiles ?? [],
        hiddenPaths: [...(sandbox.hiddenPaths ?? []), ...(stateRoot === undefined ? [] : [stateRoot])],
        searchPath,
        marker: options.supervisorId,
        dangerouslyAllowUnsandboxed: sandbox.dangerouslyAllowUnsandboxed ?? false,
        egress: egress?.mount,
      });
    } catch (error) {
      await cgroup?.remove();
      await egress?.close();
      throw error;
    }
    for (const warning of launch.description.warnings) logger.warn({ pluginId: spec.pluginId, version: spec.version }, warning);
    launchOptions.onLaunch?.(launch.description);
    let connection: UpstreamConnection;
    try {
      // The MCP client stacks load with the first connection (issue #28: an idle server has none).
      const { connectStdio } = await import('../upstream-client.ts');
      connection = await connectStdio(spec, launch, { startTimeoutMs, redact: launchOptions.redact, clock, cgroup, stopGraceMs, signal: launchOptions.signal });
    } catch (error) {
      await egress?.close();
      if (launch.container) await removeContainer(launch.container.engine, launch.container.name);
      throw error;
    }
    // Killing the engine client may leave its container running: remove it by name.
    const container = launch.container;
    if (container) connection.onEnd(() => void removeContainer(container.engine, container.name));
    // The proxy lives exactly as long as the process it serves.
    if (egress) connection.onEnd(() => void egress.close());
    return connection;
  }

  /** The allow-list of a spec whose policy enforces one (`egress` set, even empty). */
  async function egressFor(spec: StdioSpec, enforced: boolean): Promise<SandboxEgress | undefined> {
    if (!enforced || spec.egress === undefined) return undefined;
    const report = sandbox.onEgressDecision;
    return startSandboxEgress({
      label: spec.pluginName,
      allow: spec.egress,
      logger,
      ...(report ? { onDecision: (decision) => report({ ...decision, pluginId: spec.pluginId }) } : {}),
    });
  }

  return {
    host,
    async connect(spec, launchOptions) {
      if (spec.transport === 'http') return (await import('../upstream-client.ts')).connectHttp(spec, { startTimeoutMs, redact: launchOptions.redact, clock, signal: launchOptions.signal, authorization: options.remoteAuthorization, fetch: options.remoteFetch });
      if (spec.transport === 'openapi') return (await import('../in-process.ts')).connectOpenApi(spec, { startTimeoutMs, redact: launchOptions.redact, clock, signal: launchOptions.signal });
      return connectLocal(spec, launchOptions);
    },
    dispose() {
      if (ownsStateRoot && stateRoot) rmSync(stateRoot, { recursive: true, force: true });
    },
  };
}
