/**
 * @module runtime/container
 * A plugin that is a container image (issue #26, "containers, honestly"): started through the
 * container engine found on PATH (docker or podman, one CLI), with the sandbox's rules
 * translated to the engine's flags instead of bubblewrap's:
 *
 * - no privileges: `--cap-drop ALL`, `--security-opt no-new-privileges`, the unprivileged user
 *   (65534, as every sandboxed plugin), a read-only root with a small private /tmp;
 * - limits: `--memory`, `--cpus`, `--pids-limit` from the isolation policy (the engine's cgroup),
 *   bounded open files and processes (`--ulimit`);
 * - network: `--network none` unless the policy gives the host network (an admin-raised level),
 *   then the engine's default network. An egress allow-list is NOT carried into a container
 *   (the bridge that enforces it for bubblewrap runs inside the sandbox with Quiver's Node,
 *   which an image does not have): such a container gets no network at all, and says so;
 * - host folders: only the plugin's grants (runtime/host-mounts.ts, checked again here), bound at
 *   the same path, read-only or read-write; a hub path inside one is masked as bwrap does;
 * - credentials by name (`-e NAME`): the values reach the engine in its environment, never on a
 *   command line (`ps` shows names only);
 * - `--rm -i` and a name of its own (`quiver-<pid>-<plugin>-<n>`, labelled with the owning
 *   Quiver's pid): stopping the plugin kills and removes the container by name, and a Quiver
 *   that starts sweeps containers whose owner process is gone (killed with SIGKILL).
 *
 * The engine is probed once per process (`engine info`): a docker CLI without its daemon cannot
 * run containers and is skipped.
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync } from 'node:fs';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import { launchMounts, protectedOverlap } from './host-mounts.ts';
import type { ContainerSpec } from './container-spec.ts';
import type { IsolationPolicy } from './isolation-policy.ts';

/** A container engine on PATH, and why it cannot run containers when it cannot. */
export interface DetectedEngine {
  name: 'docker' | 'podman';
  path: string;
  problem: string | undefined;
}

const probed = new Map<string, DetectedEngine>();

function executableOn(name: string, searchPath: string): string | undefined {
  for (const folder of searchPath.split(':').filter(Boolean)) {
    const candidate = `${folder}/${name}`;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/**
 * Finds docker and podman on `searchPath` and asks each whether it can run containers (`info`;
 * a docker client without its daemon cannot). Probed once per path and process.
 */
export function detectEngines(searchPath: string): DetectedEngine[] {
  const found: DetectedEngine[] = [];
  for (const name of ['docker', 'podman'] as const) {
    const path = executableOn(name, searchPath);
    if (path === undefined) continue;
    let engine = probed.get(path);
    if (engine === undefined) {
      const probe = spawnSync(path, ['info', '--format', '{{json .}}'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'ignore', 'pipe'] });
      const reason = (probe.stderr ?? '').trim().split('\n').pop() || probe.error?.message || `'${name} info' exited ${probe.status}`;
      engine = { name, path, problem: probe.status === 0 ? undefined : `cannot run containers (${reason.slice(0, 200)})` };
      probed.set(path, engine);
    }
    found.push(engine);
  }
  return found;
}

/** The first engine that can run containers, or undefined with what was found. */
export function workingEngine(searchPath: string): { engine: DetectedEngine | undefined; found: DetectedEngine[] } {
  const found = detectEngines(searchPath);
  return { engine: found.find((engine) => engine.problem === undefined), found };
}

/** Labels every container Quiver starts carries (the owner's pid: the sweep's key). */
export const ownerLabel = 'io.quiver.owner-pid';

let started = 0;

/** A container name users and the sweep can read: `quiver-<pid>-<plugin>-<n>`. */
export function containerName(pluginName: string): string {
  started += 1;
  const slug = pluginName.toLowerCase().replace(/[^a-z0-9_.-]+/g, '-').replace(/^[^a-z0-9]+/, '').slice(0, 60) || 'plugin';
  return `quiver-${process.pid}-${slug}-${started}`;
}

/** Inputs of `containerRunArgs` (all already decided by the launcher's policy). */
export interface ContainerRunInput {
  pluginName: string;
  image: string;
  args: readonly string[];
  /** Names of the variables passed in (their values are in the engine's environment). */
  envNames: readonly string[];
  mounts: ReadonlyArray<{ path: string; mode: 'ro' | 'rw' }>;
  /** Hub paths masked where a mount contains them. */
  masks: ReadonlyArray<{ path: string; folder: boolean }>;
  network: 'none' | 'default';
  limits: { memoryMb: number; cpus: number; pids: number };
  name: string;
}

/** The `run` arguments after the engine: the sandbox's rules as container flags (pure). */
export function containerRunArgs(input: ContainerRunInput): string[] {
  return [
    'run', '--rm', '-i',
    '--name', input.name,
    '--label', `${ownerLabel}=${process.pid}`,
    '--label', `io.quiver.plugin=${input.pluginName}`,
    '--cap-drop', 'ALL',
    '--security-opt', 'no-new-privileges',
    '--read-only',
    '--tmpfs', '/tmp:rw,nosuid,nodev,size=64m',
    '--user', '65534:65534',
    '--memory', `${input.limits.memoryMb}m`,
    '--cpus', String(input.limits.cpus),
    '--pids-limit', String(input.limits.pids),
    // Within the hard limits of an unprivileged host; the engine's own defaults (1M files,
    // 4M processes) cannot be set without CAP_SYS_RESOURCE on some hosts.
    '--ulimit', 'nofile=4096:4096',
    '--ulimit', 'nproc=4096:4096',
    '--network', input.network === 'none' ? 'none' : 'bridge',
    ...input.envNames.flatMap((name) => ['-e', name]),
    ...input.mounts.flatMap((mount) => ['--mount', `type=bind,src=${mount.path},dst=${mount.path}${mount.mode === 'ro' ? ',readonly' : ''}`]),
    ...input.masks.flatMap((mask) => (mask.folder ? ['--tmpfs', `${mask.path}:ro,size=4k`] : ['--mount', `type=bind,src=/dev/null,dst=${mask.path},readonly`])),
    input.image,
    ...input.args,
  ];
}

/** What the launcher needs to start a container plugin. */
export interface ContainerLaunchInput {
  pluginId: string;
  pluginName: string;
  container: ContainerSpec;
  args: readonly string[];
  /** The declared environment with credentials (values; passed to the engine by name). */
  env: Readonly<Record<string, string>>;
  mounts: ReadonlyArray<{ path: string; mode: 'ro' | 'rw' }>;
  policy: IsolationPolicy;
  /** How many egress rules the plugin has (an allow-list is not carried into a container). */
  egressRules: number;
  defaultLimits: { memoryMb: number; cpus: number; pids: number };
  hiddenPaths: readonly string[];
  searchPath: string;
  marker: { name: string; value: string };
  /** `setpriv` when present: the engine client dies with Quiver (SIGTERM, which it forwards). */
  setpriv: string | undefined;
  stateDir: string;
}

/** The spawnable engine command of a container plugin, and how it is contained. */
export interface ContainerLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  engine: DetectedEngine;
  name: string;
  network: 'none' | 'host';
  warnings: string[];
}

/** Builds the engine command of a container plugin; throws `unavailable` when no engine runs here. */
export function buildContainerLaunch(input: ContainerLaunchInput): ContainerLaunch {
  const { engine, found } = workingEngine(input.searchPath);
  if (engine === undefined) {
    const broken = found.map((entry) => `${entry.name} is installed but ${entry.problem}`).join('; ');
    throw new QuiverError(
      ErrorCodes.unavailable,
      `plugin '${input.pluginName}' is a container (${input.container.image}) and no working container engine is here (${broken || 'neither docker nor podman is on PATH'}): install or start one (e.g. 'apt-get install -y podman')`,
      { details: { reason: 'container_engine_unavailable', pluginId: input.pluginId } },
    );
  }
  const warnings: string[] = [];
  const granted = launchMounts([...input.mounts], input.hiddenPaths, input.pluginName);
  warnings.push(...granted.warnings);
  const masks: Array<{ path: string; folder: boolean }> = [];
  for (const hidden of input.hiddenPaths) {
    if (!existsSync(hidden)) continue;
    if (granted.mounts.some((mount) => protectedOverlap(mount.path, [hidden]) !== undefined)) masks.push({ path: hidden, folder: lstatSync(hidden).isDirectory() });
  }
  let network: 'none' | 'default' = 'none';
  if (input.policy.network === 'host') network = 'default';
  else if (input.policy.network === 'allow-list' && input.egressRules > 0) {
    warnings.push("the egress allow-list is not carried into containers (its bridge runs on Quiver's Node inside a bubblewrap sandbox): this container has no network at all");
  }
  const limits = { ...input.defaultLimits, ...(input.policy.limits ?? {}) };
  const name = containerName(input.pluginName);
  const env: Record<string, string> = { PATH: input.searchPath, HOME: input.stateDir, LANG: 'C.UTF-8', [input.marker.name]: input.marker.value };
  // The engine reads the values of `-e NAME` from its own environment: names on the command line only.
  const envNames = Object.keys(input.env).filter((key) => key !== 'PATH' && key !== 'HOME');
  for (const key of envNames) env[key] = input.env[key]!;
  const run = containerRunArgs({ pluginName: input.pluginName, image: input.container.image, args: input.args, envNames, mounts: granted.mounts, masks, network, limits, name });
  const chain = input.setpriv ? [input.setpriv, '--pdeathsig', 'SIGTERM', '--', engine.path, ...run] : [engine.path, ...run];
  return { command: chain[0]!, args: chain.slice(1), env, cwd: input.stateDir, engine, name, network: network === 'none' ? 'none' : 'host', warnings };
}

/** `rm -f NAME`, killing at once: podman's `rm -f` otherwise waits 10 s after SIGTERM (docker's kills at once). */
function removeArgs(engine: string, name: string): string[] {
  return engine.endsWith('podman') ? ['rm', '-f', '--time', '0', name] : ['rm', '-f', name];
}

/** Kills and removes a container by name (no error when it is already gone). */
export function removeContainer(engine: string, name: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(engine, removeArgs(engine, name), { stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', () => resolve());
    child.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** True while process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes containers an earlier Quiver started and left behind (it was killed before it could
 * stop them): those labelled with an owner pid that no longer runs. Returns how many.
 */
export function sweepOrphanContainers(searchPath: string): number {
  const engines = detectEngines(searchPath).filter((engine) => engine.problem === undefined);
  let removed = 0;
  for (const engine of engines) {
    const list = spawnSync(engine.path, ['ps', '-a', '--filter', `label=${ownerLabel}`, '--format', `{{.Names}}\t{{index .Labels "${ownerLabel}"}}`], {
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if (list.status !== 0) continue;
    for (const line of list.stdout.split('\n')) {
      const [name, owner] = line.trim().split('\t');
      const pid = Number(owner);
      if (!name || !Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
      spawnSync(engine.path, removeArgs(engine.path, name), { stdio: 'ignore', timeout: 30_000 });
      removed += 1;
    }
  }
  return removed;
}
