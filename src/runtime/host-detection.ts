/**
 * @module runtime/host-detection
 * What this host offers for isolating plugins (bubblewrap, setpriv, root or not, cgroups, the
 * writable code overlay), probed once: `detectHost` blocks, `detectHostAsync` and
 * `createHostProbe` do not. The probes run real short sandboxes, so a capability is reported
 * only where it works, not merely where its binary is installed. sandbox.ts turns the result
 * into launch command lines.
 */
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { detectCgroups, type CgroupSupport } from './cgroup.ts';
import { overlayChain, overlayLayout, type OverlayTools } from './code-overlay.ts';
import { sandboxUid } from './sandbox-identity.ts';

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
