/**
 * @module runtime/sandbox
 * Turns an isolation policy into the exact command line that starts a plugin (DESIGN §3.6,
 * seed 000 §4.1). `buildLaunch()` is pure; `detectHost()` probes the machine once.
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
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import type { CgroupSupport } from './cgroup.ts';
import { detectCgroups } from './cgroup.ts';
import { overlayChain, overlayLayout, unsafeOverlayPath, type OverlayLayout, type OverlayTools } from './code-overlay.ts';
import { buildContainerLaunch } from './container.ts';
import type { ContainerSpec } from './container-spec.ts';
import { launchMounts } from './host-mounts.ts';
import { defaultLimits, type IsolationPolicy } from './isolation-policy.ts';
import { sandboxBridgeScript } from './sandbox-bridge.ts';
import type { EgressMount } from './sandbox-egress.ts';
import type { StdioSpec } from './types.ts';

/** The uid/gid sandboxed plugins run as on the host when Quiver runs as root (`nobody`). */
export const sandboxUid = 65534;

/** Name of the environment variable marking every process a supervisor starts. */
export const supervisorMarkerName = 'QUIVER_SUPERVISOR_ID';

/** What the host offers for isolation, probed once. */
export interface HostCapabilities {
  bubblewrap: string | undefined;
  /** Why bubblewrap is unusable, when it is. */
  bubblewrapProblem: string | undefined;
  setpriv: string | undefined;
  isRoot: boolean;
  cgroups: CgroupSupport;
  /** Tools of the writable code overlay, when it works here (probed with a real sandbox). */
  overlay?: OverlayTools | undefined;
  /** Why a sandboxed plugin's folder stays read-only, when it does. */
  overlayProblem?: string | undefined;
  /** Tools that build an allow-list sandbox's network namespace (sandbox-egress.ts), when present. */
  egressNet?: { unshare: string; ip: string } | undefined;
}

/** Options for probing the host. */
export interface DetectHostOptions {
  /** Path of `bwrap`; `null` pretends it is not installed (tests, or an admin's choice). */
  bubblewrapPath?: string | null;
  /** Directories searched for executables (the supervisor never reads process.env). */
  searchPath?: string;
  /** Use cgroups when the host has them (default true). */
  useCgroups?: boolean;
  /** Show a sandboxed plugin's folder writable through an overlay when the host can (default true). */
  codeOverlay?: boolean;
}

/** The default executable search path. */
export const defaultSearchPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Finds an executable on `searchPath`; undefined when missing. */
export function findExecutable(name: string, searchPath = defaultSearchPath): string | undefined {
  const candidates = name.includes('/') ? [resolve(name)] : searchPath.split(':').filter(Boolean).map((directory) => join(directory, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/** One command a host probe runs, and what came of it. */
interface ProbeCommand {
  argv: string[];
  env: Record<string, string>;
}
interface ProbeOutcome {
  status: number | null;
  stderr: string;
  error?: Error | undefined;
}

const PROBE_TIMEOUT_MS = 10_000;

/**
 * The host probe as steps: it yields each command to run (two short sandboxes) and takes back
 * its outcome, so one description serves a synchronous and an asynchronous run.
 */
function* hostDetection(options: DetectHostOptions): Generator<ProbeCommand, HostCapabilities, ProbeOutcome> {
  const searchPath = options.searchPath ?? defaultSearchPath;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const setpriv = findExecutable('setpriv', searchPath);
  const cgroups: CgroupSupport =
    options.useCgroups === false
      ? { kind: 'none', reason: 'disabled by configuration', create: () => { throw new Error('cgroups disabled'); }, sweepStale: () => 0 }
      : detectCgroups();
  let bubblewrap = options.bubblewrapPath === null ? undefined : options.bubblewrapPath ?? findExecutable('bwrap', searchPath);
  let bubblewrapProblem: string | undefined = bubblewrap ? undefined : 'bubblewrap (bwrap) is not installed';
  if (bubblewrap) {
    // Prove that an unprivileged user namespace can be made (the same flags a sandbox uses).
    const probe = [
      ...(isRoot && setpriv ? [setpriv, '--reuid', String(sandboxUid), '--regid', String(sandboxUid), '--clear-groups'] : []),
      bubblewrap, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--unshare-all', '--unshare-user',
      '--uid', String(sandboxUid), '--gid', String(sandboxUid), '--die-with-parent', '--', 'true',
    ];
    const result = yield { argv: probe, env: { PATH: searchPath } };
    if (result.status !== 0) {
      bubblewrapProblem = `bubblewrap is installed at ${bubblewrap} but cannot create a sandbox here: ${(result.stderr || result.error?.message || `exit ${result.status}`).trim()}`;
      bubblewrap = undefined;
    }
  }
  const overlay =
    options.codeOverlay === false
      ? { tools: undefined, problem: 'disabled by configuration' }
      : bubblewrap
        ? yield* probeOverlay({ bubblewrap, setpriv, isRoot, searchPath })
        : { tools: undefined, problem: 'it needs the bubblewrap sandbox' };
  const unshare = findExecutable('unshare', searchPath);
  const ip = findExecutable('ip', searchPath);
  const egressNet = unshare && ip ? { unshare, ip } : undefined;
  return { bubblewrap, bubblewrapProblem, setpriv, isRoot, cgroups, overlay: overlay.tools, overlayProblem: overlay.problem, egressNet };
}

/**
 * Probes bubblewrap, setpriv, the user and cgroups. Runs `bwrap` once to prove it works here
 * (and once more for the code overlay), blocking the event loop meanwhile (tens of ms): use
 * `detectHostAsync` where a server is serving.
 */
export function detectHost(options: DetectHostOptions = {}): HostCapabilities {
  const steps = hostDetection(options);
  let step = steps.next();
  while (!step.done) {
    const [command, ...args] = step.value.argv;
    const result = spawnSync(command!, args, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, env: step.value.env });
    step = steps.next({ status: result.status, stderr: result.stderr ?? '', error: result.error });
  }
  return step.value;
}

/** `detectHost` with its probes run as child processes the event loop waits for, not blocked on. */
export async function detectHostAsync(options: DetectHostOptions = {}): Promise<HostCapabilities> {
  const steps = hostDetection(options);
  let step = steps.next();
  while (!step.done) {
    const { argv, env } = step.value;
    const [command, ...args] = argv;
    const outcome = await new Promise<ProbeOutcome>((resolve) => {
      execFile(command!, args, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, env }, (error, _stdout, stderr) => {
        if (!error) resolve({ status: 0, stderr });
        // As spawnSync reports it: an exit status is not an error; a failed start or a timeout is.
        else if (typeof error.code === 'number') resolve({ status: error.code, stderr });
        else resolve({ status: null, stderr, error });
      });
    });
    step = steps.next(outcome);
  }
  return step.value;
}

/** The host's capabilities, probed once, on first need. */
export interface HostProbe {
  /** The capabilities now: probed synchronously (blocking) when no probe has finished yet. */
  now(): HostCapabilities;
  /** The capabilities without blocking the event loop; a failed probe is tried again by the next caller. */
  ready(): Promise<HostCapabilities>;
}

/** Creates a probe of this host; `onFound` runs once, with the first capabilities found (a racing second probe's are dropped). */
export function createHostProbe(options: DetectHostOptions = {}, onFound: (host: HostCapabilities) => void = () => {}): HostProbe {
  let found: HostCapabilities | undefined;
  let probing: Promise<HostCapabilities> | undefined;
  const adopt = (host: HostCapabilities): HostCapabilities => {
    if (found === undefined) {
      found = host;
      onFound(host);
    }
    return found;
  };
  return {
    now: () => found ?? adopt(detectHost(options)),
    ready() {
      if (found !== undefined) return Promise.resolve(found);
      probing ??= detectHostAsync(options).then(adopt, (error: unknown) => {
        probing = undefined;
        throw error;
      });
      return probing;
    },
  };
}

/**
 * Proves the writable code overlay works here the way a launch uses it: as the sandbox user, a
 * bwrap sandbox writes into an overlaid folder; the write must land in the upper layer only.
 */
function* probeOverlay(host: { bubblewrap: string; setpriv: string | undefined; isRoot: boolean; searchPath: string }): Generator<ProbeCommand, { tools: OverlayTools | undefined; problem: string | undefined }, ProbeOutcome> {
  const found = { unshare: 'unshare', mount: 'mount', find: 'find', xargs: 'xargs', mkdir: 'mkdir' } as const;
  const tools: Partial<Record<keyof OverlayTools, string>> = {};
  for (const [key, name] of Object.entries(found) as Array<[keyof OverlayTools, string]>) {
    const path = findExecutable(name, host.searchPath);
    if (!path) return { tools: undefined, problem: `'${name}' (util-linux/coreutils/findutils) is not installed` };
    tools[key] = path;
  }
  const complete = tools as OverlayTools;
  const asSandboxUser = host.isRoot && host.setpriv !== undefined;
  const folder = mkdtempSync(join(tmpdir(), 'quiver-overlay-probe-'));
  try {
    chmodSync(folder, 0o711);
    const lower = join(folder, 'lower');
    const state = join(folder, 'state');
    mkdirSync(join(lower, 'sub'), { recursive: true, mode: 0o755 });
    chmodSync(lower, 0o755);
    mkdirSync(state, { mode: 0o700 });
    if (asSandboxUser) chownSync(state, sandboxUid, sandboxUid);
    const layout = overlayLayout(state, lower);
    const probe = [
      ...(asSandboxUser ? [host.setpriv!, '--reuid', String(sandboxUid), '--regid', String(sandboxUid), '--clear-groups'] : []),
      ...overlayChain(complete, layout, { mirrorFolders: asSandboxUser }),
      host.bubblewrap, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--unshare-all', '--unshare-user',
      '--uid', String(sandboxUid), '--gid', String(sandboxUid), '--die-with-parent', '--bind', lower, lower,
      '--', '/bin/sh', '-c', 'echo ok > "$1/sub/written"', 'probe', lower,
    ];
    const result = yield { argv: probe, env: { PATH: host.searchPath } };
    const landed = existsSync(join(layout.upper, 'sub', 'written')) && !existsSync(join(lower, 'sub', 'written'));
    if (result.status === 0 && landed) return { tools: complete, problem: undefined };
    const reason = (result.stderr || result.error?.message || `exit ${result.status}`).trim();
    return { tools: undefined, problem: `an overlay mount in an unprivileged user namespace does not work here: ${reason || 'the write did not land in the upper layer'}` };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

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
  const { host, policy } = context;
  // A container image runs under the engine with the same rules as flags (issue #26).
  if (spec.container !== undefined) return containerLaunchFor(spec, spec.container, context);
  const warnings: string[] = [];
  const cwd = spec.cwd ? resolve(spec.cwd) : context.stateDir;
  let sandboxed = policy.sandbox;
  if (sandboxed && !host.bubblewrap) {
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
    sandboxed = false;
  }

  const resolved = findExecutable(spec.command, spec.command.includes('/') ? undefined : context.searchPath);
  if (!resolved && !(spec.command.includes('/') && isAbsolute(spec.command))) {
    throw new QuiverError(ErrorCodes.unavailable, `plugin '${spec.pluginName}': command '${spec.command}' was not found on ${context.searchPath}`, {
      details: { reason: 'command_not_found', pluginId: spec.pluginId },
    });
  }
  const executable = resolved ?? spec.command;
  const egress = sandboxed ? context.egress : undefined;
  if (egress !== undefined && !host.egressNet) {
    throw new QuiverError(ErrorCodes.unavailable, `plugin '${spec.pluginName}': its egress allow-list needs 'unshare' (util-linux) and 'ip' (iproute2), which are not installed`, {
      details: { reason: 'sandbox_unavailable', pluginId: spec.pluginId, trustLevel: policy.level },
    });
  }
  if (!sandboxed && context.egress !== undefined) warnings.push('the egress allow-list is not enforced: the plugin runs without a sandbox');

  let limits: LaunchDescription['limits'] = 'none';
  const extraEnv: Record<string, string> = {};
  if (policy.limits) {
    if (context.cgroupProcsFiles.length > 0) limits = 'cgroup';
    else if (isNodeCommand(executable)) {
      // Without cgroups only the V8 heap can be bounded, and only for Node plugins.
      limits = 'node-heap-flag';
      extraEnv.NODE_OPTIONS = `--max-old-space-size=${policy.limits.memoryMb}`;
      warnings.push(`no cgroups (${host.cgroups.reason ?? 'unavailable'}): memory bounded by the Node heap flag only; CPU and process count are not limited`);
    } else warnings.push(`no cgroups (${host.cgroups.reason ?? 'unavailable'}): CPU, memory and process count are not limited`);
  }

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
  // Never the hub's environment, sandboxed or not (issue #23): declared credentials and the basics.
  const env: Record<string, string> = { PATH: sandboxPath, HOME: context.stateDir, TMPDIR: sandboxed ? '/tmp' : context.stateDir, LANG: 'C.UTF-8', ...extraEnv, ...spec.env };
  env[supervisorMarkerName] = context.marker;

  let chain: string[];
  let treeGuard: LaunchDescription['treeGuard'];
  let codeFolder: LaunchDescription['codeFolder'];
  if (sandboxed) {
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
    chain = [
      ...(asSandboxUser ? dropToSandboxUser(host.setpriv!) : []),
      ...(egress === undefined ? [] : netChain(host.egressNet!, egress.addresses)),
      ...(overlay === undefined ? [] : overlayChain(host.overlay!, overlay, { mirrorFolders: asSandboxUser })),
      bwrap, ...args, '--',
      ...(egress === undefined ? [] : [bridgeNode, '-e', sandboxBridgeScript, egress.configPath]),
      executable, ...spec.args,
    ];
    if (spec.codeDir !== undefined) codeFolder = overlay === undefined ? 'read-only' : 'overlay';
    treeGuard = 'bubblewrap-pid-namespace';
  } else {
    // Only an admin's dangerouslyAllowUnsandboxed reaches here (no usable bubblewrap): the
    // plugin still never runs as root nor keeps a capability, and has the cleared environment.
    if (host.isRoot && !host.setpriv) throw runsAsRoot(spec, policy);
    const drop = host.isRoot ? dropToSandboxUser(host.setpriv!) : host.setpriv ? [host.setpriv] : [];
    chain = [...drop, ...(host.setpriv ? ['--pdeathsig', 'SIGKILL'] : []), ...(drop.length > 0 ? ['--'] : []), executable, ...spec.args];
    treeGuard = host.setpriv ? 'pdeathsig' : 'process-group-only';
    if (spec.mounts.length > 0) warnings.push(`granted host paths (${spec.mounts.map((mount) => `${mount.path}:${mount.mode}`).join(', ')}) are not enforced: without a sandbox the plugin sees what its user may see`);
    warnings.push(
      host.isRoot
        ? "running without a sandbox (dangerouslyAllowUnsandboxed): as uid 65534 with no capability, the hub's files are hidden by their permissions only"
        : "running without a sandbox (dangerouslyAllowUnsandboxed): as Quiver's own user, so the hub's home, data folder and key file are readable to it",
    );
    if (!host.setpriv) warnings.push('setpriv is unavailable: if Quiver is killed with SIGKILL, this plugin may outlive it');
  }

  if (context.cgroupProcsFiles.length > 0) {
    const script = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"';
    chain = ['/bin/sh', '-c', script, 'quiver-launch', ...context.cgroupProcsFiles, '--', ...chain];
  }
  return {
    command: chain[0]!,
    args: chain.slice(1),
    env,
    cwd,
    description: { sandboxed, network: !sandboxed || policy.network === 'host' ? 'host' : egress !== undefined ? 'allow-list' : 'none', treeGuard, limits, ...(codeFolder ? { codeFolder } : {}), warnings },
  };
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
