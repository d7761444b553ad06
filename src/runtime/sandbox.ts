/**
 * @module runtime/sandbox
 * Turns an isolation policy into the exact command line that starts a plugin (DESIGN §3.6,
 * seed 000 §4.1). `buildLaunch()` is pure; what the host offers comes from host-detection.ts.
 *
 * The launch chain, outermost first, each step `exec`ing the next so the pid stays the same:
 * 1. `/bin/sh -c 'echo $$ > cgroup.procs…; exec …'` — joins the plugin's cgroups before
 *    anything runs, so no child it forks can escape the limits;
 * 2. `setpriv --reuid 65534 --regid 65534 --clear-groups` (whenever Quiver runs as root) — the
 *    sandbox runs as `nobody` on the host, not as root in a user namespace, with no capability;
 * 3. `bwrap … --unshare-pid --die-with-parent` — the sandbox, at every trust level (issue #23:
 *    a level loosens the network and the limits, never the user or the filesystem view), whose
 *    pid namespace dies with bwrap and whose bwrap dies with Quiver, even when Quiver is
 *    SIGKILLed. Only an admin's `dangerouslyAllowUnsandboxed` on a host without bubblewrap
 *    runs a plugin outside it, and then still as `nobody` (never as root: refused without
 *    setpriv) with the cleared environment, under `setpriv --pdeathsig SIGKILL`.
 *
 * The hub's own paths (`hiddenPaths`: its home, data folder, key file, state root) are never
 * shown: nothing binds them, and where a folder the plugin is given contains one, an empty
 * tmpfs (a folder) or /dev/null (a file) is mounted over it. Host paths an admin granted
 * (`spec.mounts`, issue #26) are bound at the same path, read-only or read-write; a grant that
 * is, holds or sits inside a hub path refuses the launch (host-mounts.ts).
 *
 * Between 2 and 3, when the spec names a `codeDir`, `unshare … sh` mounts that folder as an
 * overlay whose writes land in the state folder (`code-overlay.ts`), so the plugin may write
 * where it expects to while the shared install cache stays untouched.
 *
 * Credentials are passed in the environment of the spawned process (bwrap inherits it), never
 * as `--setenv` arguments: a command line is readable by every user through /proc.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import { overlayChain, overlayLayout, unsafeOverlayPath, type OverlayLayout } from './code-overlay.ts';
import { buildContainerLaunch } from './container.ts';
import type { ContainerSpec } from './container-spec.ts';
import { findExecutable, type HostCapabilities } from './host-detection.ts';
import { launchMounts } from './host-mounts.ts';
import { defaultLimits, type IsolationPolicy } from './isolation-policy.ts';
import { sandboxBridgeScript } from './sandbox-bridge.ts';
import type { EgressMount } from './sandbox-egress.ts';
import { sandboxUid, supervisorMarkerName } from './sandbox-identity.ts';
import type { StdioSpec } from './types.ts';

/** Everything `buildLaunch` needs besides the spec. */
export interface LaunchContext {
  host: HostCapabilities;
  policy: IsolationPolicy;
  /** The plugin's writable folder (already created, owned by the sandbox user). */
  stateDir: string;
  /** cgroup.procs files to join, when limits are enforced by cgroups. */
  cgroupProcsFiles: string[];
  /**
   * The hub's own paths no plugin may see (its home, data folder, key file, state root): masked
   * where a folder given to the plugin contains them (issue #23).
   */
  hiddenPaths?: readonly string[] | undefined;
  searchPath: string;
  /** Marker value set as QUIVER_SUPERVISOR_ID in every plugin process. */
  marker: string;
  /** Run plugins that need a sandbox without one when bubblewrap is unusable. */
  dangerouslyAllowUnsandboxed: boolean;
  /**
   * An enforced allow-list (sandbox-egress.ts): a sandboxed process then reaches only what its
   * proxy allows, through the bridge. Without it a sandbox has no network at all.
   */
  egress?: EgressMount | undefined;
}

/** How the plugin will actually be contained (reported in health and logs). */
export interface LaunchDescription {
  sandboxed: boolean;
  /** 'allow-list': own network namespace, out only through the egress proxy's allow-list. */
  network: 'none' | 'allow-list' | 'host';
  /** How the process tree is kept together and killed with Quiver. */
  treeGuard: 'bubblewrap-pid-namespace' | 'pdeathsig' | 'process-group-only' | 'container';
  /** How resource limits are enforced ('container': the engine's flags, runtime/container.ts). */
  limits: 'cgroup' | 'node-heap-flag' | 'none' | 'container';
  /** How the plugin sees its own folder (specs with a `codeDir`, sandboxed): writable overlay or read-only. */
  codeFolder?: 'overlay' | 'read-only';
  warnings: string[];
}

/** A ready-to-spawn command. */
export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  description: LaunchDescription;
  /** A container plugin's engine and container name: whoever ends the process removes the container too. */
  container?: { engine: string; name: string } | undefined;
}

const sandboxPath = '/usr/local/bin:/usr/bin:/bin';
const rootLinks = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
const etcAlways = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/localtime', '/etc/ssl/certs', '/etc/ca-certificates', '/etc/pki/tls/certs'];
const etcNetwork = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/host.conf', '/etc/gai.conf'];

function isUnder(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`));
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function isNodeCommand(executable: string): boolean {
  return /^node(js)?(\d+)?$/.test(basename(executable));
}

/**
 * glibc's list of variables it ignores in privileged programs (`UNSECURE_ENVVARS`) plus every
 * `LD_*`: each can make the dynamic loader or libc run or read attacker-chosen files.
 */
const LOADER_VARIABLES = new Set(['GCONV_PATH', 'GETCONF_DIR', 'HOSTALIASES', 'LOCALDOMAIN', 'LOCPATH', 'MALLOC_TRACE', 'NIS_PATH', 'NLSPATH', 'RESOLV_HOST_CONF', 'RES_OPTIONS', 'TZDIR']);

/** True for an environment variable that must never reach the launch chain of a plugin. */
export function isLoaderVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return upper.startsWith('LD_') || LOADER_VARIABLES.has(upper) || upper.startsWith('MALLOC_');
}

/** Builds the sandbox (or pass-through) command line for a stdio plugin. Throws when a required sandbox is unavailable. */
export function buildLaunch(spec: StdioSpec, context: LaunchContext): Launch {
  // A container image runs under the engine with the same rules as flags (issue #26).
  if (spec.container !== undefined) return containerLaunchFor(spec, spec.container, context);
  const { host, policy } = context;
  const warnings: string[] = [];
  const cwd = spec.cwd ? resolve(spec.cwd) : context.stateDir;
  const sandboxed = sandboxOrRefuse(spec, context, warnings);
  const executable = resolveCommand(spec, context);
  const egress = sandboxed ? context.egress : undefined;
  if (egress !== undefined && !host.egressNet) {
    throw new QuiverError(ErrorCodes.unavailable, `plugin '${spec.pluginName}': its egress allow-list needs 'unshare' (util-linux) and 'ip' (iproute2), which are not installed`, {
      details: { reason: 'sandbox_unavailable', pluginId: spec.pluginId, trustLevel: policy.level },
    });
  }
  if (!sandboxed && context.egress !== undefined) warnings.push('the egress allow-list is not enforced: the plugin runs without a sandbox');
  const { limits, extraEnv } = launchLimits(executable, context, warnings);
  const env = launchEnvironment(spec, context, sandboxed, extraEnv);
  const launched = sandboxed ? bubblewrapChain(spec, context, { executable, cwd, egress }, warnings) : unsandboxedChain(spec, context, executable, warnings);
  const chain = withCgroupJoin(launched.chain, context.cgroupProcsFiles);
  return {
    command: chain[0]!,
    args: chain.slice(1),
    env,
    cwd,
    description: {
      sandboxed,
      network: !sandboxed || policy.network === 'host' ? 'host' : egress !== undefined ? 'allow-list' : 'none',
      treeGuard: launched.treeGuard,
      limits,
      ...(launched.codeFolder ? { codeFolder: launched.codeFolder } : {}),
      warnings,
    },
  };
}

/**
 * Whether the plugin runs in bubblewrap: always when its policy says so and the host has it;
 * without bubblewrap only an admin's `dangerouslyAllowUnsandboxed` lets it run (warned), else
 * the launch is refused.
 */
function sandboxOrRefuse(spec: StdioSpec, context: LaunchContext, warnings: string[]): boolean {
  const { host, policy } = context;
  if (!policy.sandbox || host.bubblewrap) return policy.sandbox;
  const problem = host.bubblewrapProblem ?? 'bubblewrap is unavailable';
  if (!context.dangerouslyAllowUnsandboxed) {
    throw new QuiverError(
      ErrorCodes.unavailable,
      `plugin '${spec.pluginName}' (trust ${policy.level}) must run in a bubblewrap sandbox, but ${problem}. ` +
        'Install bubblewrap (e.g. `apt-get install -y bubblewrap`), or set QUIVER_DANGEROUSLY_ALLOW_UNSANDBOXED=1 to run it without a sandbox at your own risk.',
      { details: { reason: 'sandbox_unavailable', pluginId: spec.pluginId, trustLevel: policy.level } },
    );
  }
  warnings.push(`running ${policy.level} plugin without a sandbox (dangerouslyAllowUnsandboxed): ${problem}`);
  return false;
}

/** The plugin's program: found on the search path, or an absolute path taken as given. */
function resolveCommand(spec: StdioSpec, context: LaunchContext): string {
  const resolved = findExecutable(spec.command, spec.command.includes('/') ? undefined : context.searchPath);
  if (!resolved && !(spec.command.includes('/') && isAbsolute(spec.command))) {
    throw new QuiverError(ErrorCodes.unavailable, `plugin '${spec.pluginName}': command '${spec.command}' was not found on ${context.searchPath}`, {
      details: { reason: 'command_not_found', pluginId: spec.pluginId },
    });
  }
  return resolved ?? spec.command;
}

/** How the policy's limits are enforced here: cgroups, else the V8 heap flag for a Node plugin, else not at all (warned). */
function launchLimits(executable: string, context: LaunchContext, warnings: string[]): { limits: LaunchDescription['limits']; extraEnv: Record<string, string> } {
  const { host, policy } = context;
  if (!policy.limits) return { limits: 'none', extraEnv: {} };
  if (context.cgroupProcsFiles.length > 0) return { limits: 'cgroup', extraEnv: {} };
  if (isNodeCommand(executable)) {
    // Without cgroups only the V8 heap can be bounded, and only for Node plugins.
    warnings.push(`no cgroups (${host.cgroups.reason ?? 'unavailable'}): memory bounded by the Node heap flag only; CPU and process count are not limited`);
    return { limits: 'node-heap-flag', extraEnv: { NODE_OPTIONS: `--max-old-space-size=${policy.limits.memoryMb}` } };
  }
  warnings.push(`no cgroups (${host.cgroups.reason ?? 'unavailable'}): CPU, memory and process count are not limited`);
  return { limits: 'none', extraEnv: {} };
}

/** The plugin's environment: never the hub's, sandboxed or not (issue #23), only declared credentials and the basics. */
function launchEnvironment(spec: StdioSpec, context: LaunchContext, sandboxed: boolean, extraEnv: Record<string, string>): Record<string, string> {
  const unsafe = Object.keys(spec.env).filter(isLoaderVariable);
  if (unsafe.length > 0) {
    // The launch chain (sh, setpriv, unshare, bwrap) runs with this environment before any
    // sandbox exists, as root when Quiver is root: a loader variable would run code there.
    throw new QuiverError(
      ErrorCodes.invalidInput,
      `plugin '${spec.pluginName}': the environment may not set ${unsafe.join(', ')} (dynamic-loader variables act on Quiver's launch of the plugin, outside its sandbox)`,
      { details: { reason: 'unsafe_environment', pluginId: spec.pluginId, keys: unsafe } },
    );
  }
  const env: Record<string, string> = { PATH: sandboxPath, HOME: context.stateDir, TMPDIR: sandboxed ? '/tmp' : context.stateDir, LANG: 'C.UTF-8', ...extraEnv, ...spec.env };
  env[supervisorMarkerName] = context.marker;
  return env;
}

/** A launch chain and what guards the plugin's process tree. */
interface LaunchChain {
  chain: string[];
  treeGuard: LaunchDescription['treeGuard'];
  codeFolder?: LaunchDescription['codeFolder'];
}

/** The sandboxed chain: setpriv (as root), the egress namespace, the code overlay, then bwrap with the plugin's filesystem view. */
function bubblewrapChain(spec: StdioSpec, context: LaunchContext, launch: { executable: string; cwd: string; egress: LaunchContext['egress'] }, warnings: string[]): LaunchChain {
  const { executable, cwd, egress } = launch;
  const { host, policy } = context;
  const bwrap = host.bubblewrap!;
  const args = ['--die-with-parent', '--new-session', '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  // An allow-list sandbox joins the namespace the chain made (netChain); otherwise its own, empty.
  if (policy.network !== 'host' && egress === undefined) args.push('--unshare-net');
  args.push('--uid', String(sandboxUid), '--gid', String(sandboxUid));
  args.push('--ro-bind', '/usr', '/usr');
  for (const link of rootLinks) {
    if (!existsSync(link)) continue;
    const stat = lstatSync(link);
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(link), link);
    else args.push('--ro-bind', link, link);
  }
  const etc = egress !== undefined ? etcNetwork.filter((path) => path !== '/etc/hosts' && path !== '/etc/resolv.conf') : policy.network === 'host' ? etcNetwork : [];
  for (const path of [...etcAlways, ...etc]) args.push('--ro-bind-try', path, path);
  if (egress !== undefined) args.push('--ro-bind', egress.hostsFile, '/etc/hosts', '--ro-bind', egress.resolvFile, '/etc/resolv.conf');
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  // Host folders the sandbox shows whole. /tmp, /proc and /dev are the sandbox's own (a tmpfs
  // and fresh mounts), so a program under them, e.g. a Node unpacked in /tmp, needs its own bind.
  const shownWhole = ['/usr', ...rootLinks];
  const readOnly = [...(spec.cwd ? [cwd] : []), ...spec.readOnlyPaths.map((path) => resolve(path))];
  if (egress !== undefined) readOnly.push(egress.folder, egress.socketFolder);
  for (const program of egress !== undefined ? [executable, bridgeNode] : [executable]) {
    const real = realOrSelf(program);
    if (!isUnder(real, [...shownWhole, ...readOnly])) readOnly.push(dirname(real));
    if (!isUnder(program, [...shownWhole, ...readOnly])) readOnly.push(dirname(program));
  }
  const overlay = spec.codeDir === undefined ? undefined : overlayFor(resolve(spec.codeDir), context, warnings);
  const mounts: Mount[] = [];
  // The overlaid folder is bound writable instead; read-only binds inside it would hide the overlay.
  // Likewise inside the writable state folder: a one-shot build runs in a package folder of its
  // install folder (a monorepo's `--path`) and must write there; a read-only bind over it would
  // land on top of the writable one (deeper mounts come last) and fail the build with EROFS.
  const writable = [...(overlay === undefined ? [] : [overlay.lower]), context.stateDir];
  for (const path of [...new Set(readOnly)]) {
    if (!isUnder(path, writable)) mounts.push({ kind: 'ro', path });
  }
  if (overlay !== undefined) mounts.push({ kind: 'rw', path: overlay.lower });
  mounts.push({ kind: 'rw', path: context.stateDir });
  // Host paths an admin granted (issue #26), checked again here: none may show a hub path.
  const granted = launchMounts(spec.mounts, context.hiddenPaths ?? [], spec.pluginName);
  warnings.push(...granted.warnings);
  for (const mount of granted.mounts) mounts.push({ kind: mount.mode, path: mount.path });
  // The layers are the plugin's only through the overlay: editing them under a mount is undefined.
  if (overlay !== undefined) mounts.push({ kind: 'tmpfs', path: overlay.root });
  // /tmp, /proc and /dev are the sandbox's own: only real binds can show a hub path.
  mounts.push(...hubMasks(context.hiddenPaths ?? [], ['/usr', '/etc', ...rootLinks, ...mounts.map((mount) => mount.path)]));
  args.push(...mountArgs(mounts));
  args.push('--chdir', cwd);
  if (host.isRoot && !host.setpriv) throw runsAsRoot(spec, policy);
  const asSandboxUser = host.isRoot;
  const chain = [
    ...(asSandboxUser ? dropToSandboxUser(host.setpriv!) : []),
    ...(egress === undefined ? [] : netChain(host.egressNet!, egress.addresses)),
    ...(overlay === undefined ? [] : overlayChain(host.overlay!, overlay, { mirrorFolders: asSandboxUser })),
    bwrap, ...args, '--',
    ...(egress === undefined ? [] : [bridgeNode, '-e', sandboxBridgeScript, egress.configPath]),
    executable, ...spec.args,
  ];
  const codeFolder: LaunchDescription['codeFolder'] = spec.codeDir === undefined ? undefined : overlay === undefined ? 'read-only' : 'overlay';
  return { chain, treeGuard: 'bubblewrap-pid-namespace', ...(codeFolder ? { codeFolder } : {}) };
}

/**
 * Only an admin's dangerouslyAllowUnsandboxed reaches here (no usable bubblewrap): the plugin
 * still never runs as root nor keeps a capability, and has the cleared environment.
 */
function unsandboxedChain(spec: StdioSpec, context: LaunchContext, executable: string, warnings: string[]): LaunchChain {
  const { host, policy } = context;
  if (host.isRoot && !host.setpriv) throw runsAsRoot(spec, policy);
  const drop = host.isRoot ? dropToSandboxUser(host.setpriv!) : host.setpriv ? [host.setpriv] : [];
  const chain = [...drop, ...(host.setpriv ? ['--pdeathsig', 'SIGKILL'] : []), ...(drop.length > 0 ? ['--'] : []), executable, ...spec.args];
  if (spec.mounts.length > 0) warnings.push(`granted host paths (${spec.mounts.map((mount) => `${mount.path}:${mount.mode}`).join(', ')}) are not enforced: without a sandbox the plugin sees what its user may see`);
  warnings.push(
    host.isRoot
      ? "running without a sandbox (dangerouslyAllowUnsandboxed): as uid 65534 with no capability, the hub's files are hidden by their permissions only"
      : "running without a sandbox (dangerouslyAllowUnsandboxed): as Quiver's own user, so the hub's home, data folder and key file are readable to it",
  );
  if (!host.setpriv) warnings.push('setpriv is unavailable: if Quiver is killed with SIGKILL, this plugin may outlive it');
  return { chain, treeGuard: host.setpriv ? 'pdeathsig' : 'process-group-only' };
}

/** Prefixes a shell that joins the plugin's cgroups before anything runs, so no child it forks escapes the limits. */
function withCgroupJoin(chain: string[], cgroupProcsFiles: readonly string[]): string[] {
  if (cgroupProcsFiles.length === 0) return chain;
  const script = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"';
  return ['/bin/sh', '-c', script, 'quiver-launch', ...cgroupProcsFiles, '--', ...chain];
}

/** The setpriv prefix that makes the rest of the chain `nobody` with no capability and no way back. */
function dropToSandboxUser(setpriv: string): string[] {
  return [setpriv, '--reuid', String(sandboxUid), '--regid', String(sandboxUid), '--clear-groups', '--inh-caps=-all', '--no-new-privs'];
}

/** The refusal when nothing can take root's privileges away from a plugin (issue #23). */
function runsAsRoot(spec: StdioSpec, policy: IsolationPolicy): QuiverError {
  return new QuiverError(
    ErrorCodes.unavailable,
    `plugin '${spec.pluginName}' (trust ${policy.level}) would run as root: Quiver runs as root and setpriv (util-linux) is not installed to drop to an unprivileged user. Install util-linux.`,
    { details: { reason: 'sandbox_unavailable', pluginId: spec.pluginId, trustLevel: policy.level } },
  );
}

/** One mount of a plugin's own paths, or a mask over one of the hub's. */
interface Mount {
  kind: 'ro' | 'rw' | 'tmpfs' | 'mask-folder' | 'mask-file';
  path: string;
}

function depth(path: string): number {
  return path.split('/').filter(Boolean).length;
}

/**
 * The masks of the hub's paths that some bound folder contains (issue #23): an empty tmpfs
 * over a folder, /dev/null over a file. A path nothing contains is simply never mounted.
 */
function hubMasks(hiddenPaths: readonly string[], boundPaths: readonly string[]): Mount[] {
  const bound = boundPaths.map((path) => realOrSelf(path));
  const masks: Mount[] = [];
  // Shallowest first, so a path inside a masked folder needs no mask of its own.
  const hidden = [...new Set(hiddenPaths.map((path) => realOrSelf(resolve(path))))].sort((a, b) => depth(a) - depth(b));
  for (const path of hidden) {
    if (!existsSync(path) || !isUnder(path, bound)) continue;
    if (isUnder(path, masks.filter((mask) => mask.kind === 'mask-folder').map((mask) => mask.path))) continue;
    masks.push({ kind: lstatSync(path).isDirectory() ? 'mask-folder' : 'mask-file', path });
  }
  return masks;
}

/** bwrap arguments of the mounts, shallowest first so a deeper bind or mask lands on top (masks last at equal depth). */
function mountArgs(mounts: readonly Mount[]): string[] {
  const ordered = mounts
    .map((mount, index) => ({ mount, index }))
    .sort((a, b) => depth(a.mount.path) - depth(b.mount.path) || Number(isMask(a.mount)) - Number(isMask(b.mount)) || a.index - b.index);
  return ordered.flatMap(({ mount }) => {
    switch (mount.kind) {
      case 'ro':
        return ['--ro-bind', mount.path, mount.path];
      case 'rw':
        return ['--bind', mount.path, mount.path];
      case 'tmpfs':
      case 'mask-folder':
        return ['--tmpfs', mount.path];
      case 'mask-file':
        return ['--ro-bind', '/dev/null', mount.path];
    }
  });
}

function isMask(mount: Mount): boolean {
  return mount.kind === 'mask-folder' || mount.kind === 'mask-file';
}

/** The Node that runs the egress bridge inside an allow-list sandbox (Quiver's own). */
const bridgeNode = process.execPath;

// $1 ip; then addresses for lo up to '--'; then the command. Runs as root of a fresh user
// namespace owning a fresh network namespace: only that namespace is touched.
const netScript = [
  'ip=$1; shift',
  '"$ip" link set lo up || exit 95',
  'echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start || exit 95',
  'while [ "$1" != "--" ]; do "$ip" addr add "$1" dev lo || exit 95; shift; done; shift',
  'exec "$@"',
].join('\n');

/**
 * The chain prefix of an allow-list sandbox: a network namespace with `lo` up, low ports open to
 * the (unprivileged) bridge and the plan's addresses on `lo`; bubblewrap then joins it.
 */
function netChain(tools: { unshare: string; ip: string }, addresses: readonly string[]): string[] {
  return [tools.unshare, '--user', '--map-root-user', '--net', '--', '/bin/sh', '-c', netScript, 'quiver-net', tools.ip, ...addresses, '--'];
}

/** The overlay of a sandboxed plugin's folder, or undefined (with a warning) when it stays read-only. */
function overlayFor(codeDir: string, context: LaunchContext, warnings: string[]): OverlayLayout | undefined {
  const problem = context.host.overlay === undefined ? (context.host.overlayProblem ?? 'the overlay is unavailable') : unsafeOverlayPath(codeDir) ?? unsafeOverlayPath(context.stateDir);
  if (problem === undefined) return overlayLayout(context.stateDir, codeDir);
  warnings.push(`the plugin's folder is read-only (writes there fail with EROFS): ${problem}`);
  return undefined;
}

/** The engine command of a container plugin (runtime/container.ts), as a Launch. */
function containerLaunchFor(spec: StdioSpec, container: ContainerSpec, context: LaunchContext): Launch {
  const unsafe = Object.keys(spec.env).filter(isLoaderVariable);
  if (unsafe.length > 0) {
    throw new QuiverError(ErrorCodes.invalidInput, `plugin '${spec.pluginName}': the environment may not set ${unsafe.join(', ')} (dynamic-loader variables act on the engine that starts the container)`, {
      details: { reason: 'unsafe_environment', pluginId: spec.pluginId, keys: unsafe },
    });
  }
  const launch = buildContainerLaunch({
    pluginId: spec.pluginId,
    pluginName: spec.pluginName,
    container,
    args: spec.args,
    env: spec.env,
    mounts: spec.mounts,
    policy: context.policy,
    egressRules: spec.egress?.length ?? 0,
    defaultLimits: { ...defaultLimits, ...spec.limits },
    hiddenPaths: context.hiddenPaths ?? [],
    searchPath: context.searchPath,
    marker: { name: supervisorMarkerName, value: context.marker },
    setpriv: context.host.setpriv,
    stateDir: context.stateDir,
  });
  return {
    command: launch.command,
    args: launch.args,
    env: launch.env,
    cwd: launch.cwd,
    description: { sandboxed: true, network: launch.network, treeGuard: 'container', limits: 'container', warnings: launch.warnings },
    container: { engine: launch.engine.path, name: launch.name },
  };
}
