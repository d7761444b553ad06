/**
 * @module runtime/one-shot
 * A one-shot command in the plugin sandbox (issue #15): a git-hosted server's build step
 * (`npm run build`) runs the repository's own code, so it gets what an UNVERIFIED plugin gets
 * — bubblewrap, no network, the host read-only, dropped privileges — plus write access to one
 * work folder (the checkout being built). It is bounded in time and its output is kept as a
 * short tail for the error message.
 *
 * When Quiver runs as root the sandbox runs as `nobody`, so the work folder is handed to that
 * user for the command and taken back afterwards (root-owned, not writable by others), so no
 * later plugin process can modify the shared install cache.
 */
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import { buildLaunch } from './sandbox.ts';
import { defaultSearchPath, type HostCapabilities } from './host-detection.ts';
import { sandboxUid } from './sandbox-identity.ts';
import { isolationPolicyFor, type IsolationPolicy } from './isolation-policy.ts';
import { egressBridgeScript, startEgressProxy, type EgressDecision, type EgressProxy, type EgressRule } from './egress-proxy.ts';
import { dirname } from 'node:path';
import { stdioSpecSchema } from './types.ts';

const execFileAsync = promisify(execFile);

/** One sandboxed command. */
export interface OneShotRequest {
  /** Names the command in errors and logs, e.g. `weather-mcp build`. */
  label: string;
  command: string;
  args: string[];
  /** The writable folder, and the command's `$HOME`. */
  workDir: string;
  /** Where the command runs, inside `workDir` (default: `workDir`). */
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs: number;
  /** Memory bound (MiB) for the command (Node heap flag without cgroups). Default 2048. */
  memoryMb?: number;
  /**
   * Destinations the command may reach through an HTTP CONNECT proxy outside the sandbox
   * (runtime/egress-proxy.ts); without it the command has no network at all.
   */
  egress?: readonly EgressRule[];
  /** Told of every egress decision (allowed or denied). */
  onEgress?: (decision: EgressDecision) => void;
  /** Host paths the command may read besides /usr and the work folder (e.g. a local package index). */
  readOnlyPaths?: readonly string[];
}

/** How the command ended. */
export interface OneShotResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The last lines of stdout and stderr together, at most `tailBytes`. */
  outputTail: string;
}

export interface OneShotContext {
  host: HostCapabilities;
  dangerouslyAllowUnsandboxed: boolean;
  searchPath?: string;
  /** How much output to keep (default 4 KiB). */
  tailBytes?: number;
}

async function chownTree(folder: string, owner: string): Promise<void> {
  await execFileAsync('chown', ['-R', '--no-dereference', owner, folder]);
}

/**
 * Runs one command in the UNVERIFIED sandbox with `workDir` writable, and no network unless
 * `egress` names where it may go; never throws for a failing command.
 */
export async function runOneShot(request: OneShotRequest, context: OneShotContext): Promise<OneShotResult> {
  const policy = isolationPolicyFor('UNVERIFIED', { memoryMb: request.memoryMb ?? 2048, pids: 256 });
  const proxy = request.egress === undefined
    ? undefined
    : await startEgressProxy({ label: request.label, allow: request.egress, ...(request.onEgress ? { onDecision: request.onEgress } : {}) });
  try {
    return await runInSandbox(request, context, policy, proxy);
  } finally {
    await proxy?.close();
  }
}

async function runInSandbox(request: OneShotRequest, context: OneShotContext, policy: IsolationPolicy, proxy: EgressProxy | undefined): Promise<OneShotResult> {
  // With egress, the command runs behind the bridge: `node -e BRIDGE SOCKET COMMAND ARGS…`.
  const command = proxy ? process.execPath : request.command;
  const args = proxy ? ['-e', egressBridgeScript, proxy.socketPath, request.command, ...request.args] : request.args;
  const spec = stdioSpecSchema.parse({
    transport: 'stdio',
    pluginId: `one-shot-${request.label}`,
    pluginName: request.label,
    version: '0',
    trustLevel: 'UNVERIFIED',
    command,
    args,
    env: request.env ?? {},
    readOnlyPaths: [...(proxy ? [dirname(proxy.socketPath)] : []), ...(request.readOnlyPaths ?? [])],
    ...(request.cwd !== undefined && request.cwd !== request.workDir ? { cwd: request.cwd } : {}),
  });
  const launch = buildLaunch(
    spec,
    {
      host: context.host,
      policy,
      stateDir: request.workDir,
      cgroupProcsFiles: [],
      searchPath: context.searchPath ?? defaultSearchPath,
      marker: `one-shot:${request.label}`,
      dangerouslyAllowUnsandboxed: context.dangerouslyAllowUnsandboxed,
    },
  );
  const handOver = launch.description.sandboxed && context.host.isRoot && context.host.setpriv !== undefined;
  if (handOver) await chownTree(request.workDir, `${sandboxUid}:${sandboxUid}`);
  const tailBytes = context.tailBytes ?? 4096;
  try {
    return await new Promise<OneShotResult>((resolve, reject) => {
      const child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let tail = '';
      const keep = (chunk: Buffer) => {
        tail = (tail + chunk.toString('utf8')).slice(-tailBytes);
      };
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        // The whole process group: bwrap and everything the build started.
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }, request.timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new QuiverError(ErrorCodes.unavailable, `${request.label}: cannot start ${request.command}: ${error.message}`, { cause: error }));
      });
      child.once('close', (exitCode, signal) => {
        clearTimeout(timer);
        resolve({ exitCode, signal, timedOut, outputTail: tail.trim() });
      });
    });
  } finally {
    if (handOver) {
      await chownTree(request.workDir, '0:0');
      await execFileAsync('chmod', ['-R', 'go-w', request.workDir]);
    }
  }
}
