/**
 * @module plugins/install/spec
 * The runtime spec of an installed or staged plugin: its launch made absolute against its
 * folder, credentials as environment or headers, the folders its sandbox may read, and the
 * check that the sandbox's unprivileged user can reach the folder at all.
 */
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { QuiverError } from '../../core/errors.ts';
import type { HostMount } from '../../runtime/host-mounts.ts';
import type { Execution, TrustLevel, UpstreamSpecInput } from '../../runtime/types.ts';
import type { StoredLaunch } from '../launch.ts';
import { openApiUpstreamSpec } from './openapi.ts';

/** A stdio command relative to the plugin (`./server`) is made absolute against its working folder. */
function absoluteCommand(command: string, cwd: string): string {
  return command.startsWith('./') || command.startsWith('../') ? resolve(cwd, command) : command;
}

/**
 * When Quiver runs as root, a sandboxed plugin is started as an unprivileged user (runtime
 * sandbox.ts), which must be able to reach the plugin's folder: every folder above it needs
 * the execute bit for others. Returns the first folder that blocks it, if any.
 */
export async function folderBlockingSandbox(path: string): Promise<string | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  let current = resolve(path);
  for (;;) {
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
    if (((await stat(current)).mode & 0o001) === 0) return current;
  }
}

/** Builds the runtime spec of an installed or staged plugin. */
export function buildUpstreamSpec(input: {
  pluginId: string;
  pluginName: string;
  version: string;
  launch: StoredLaunch;
  root: string | undefined;
  env: Record<string, string>;
  headers: Record<string, string>;
  readOnlyPaths: readonly string[];
  trustLevel: TrustLevel;
  /** Writable folder of the plugin (default: the supervisor's `<stateRoot>/<pluginId>`). */
  stateDir?: string | undefined;
  /** Timeout, retries, breaker and limits from the PID (`executionFromPid`); absent, the runtime's defaults. */
  execution?: Execution | undefined;
  /** Host paths an admin granted (issue #26), bound into the sandbox. */
  mounts?: readonly HostMount[] | undefined;
}): UpstreamSpecInput {
  const base = {
    pluginId: input.pluginId,
    pluginName: input.pluginName,
    version: input.version,
    trustLevel: input.trustLevel,
    ...(input.execution === undefined ? {} : { execution: input.execution }),
  };
  if (input.launch.transport === 'http') return { ...base, transport: 'http', url: input.launch.url, headers: input.headers };
  if (input.launch.transport === 'openapi') return openApiUpstreamSpec(base, input.launch, input.root, input.env);
  if (input.root === undefined) throw new QuiverError('internal', `plugin '${input.pluginName}' has a local launch but no folder`);
  const cwd = isAbsolute(input.launch.cwd) ? input.launch.cwd : join(input.root, input.launch.cwd);
  return {
    ...base,
    transport: 'stdio',
    command: absoluteCommand(input.launch.command, cwd),
    args: input.launch.args,
    env: input.env,
    cwd,
    // The whole cache folder, not only cwd: an npm package's dependencies sit beside it.
    readOnlyPaths: [...new Set([input.root, ...input.readOnlyPaths])],
    // In a sandbox the folder appears writable; the writes stay in the state folder (runtime/code-overlay.ts).
    codeDir: input.root,
    mounts: [...(input.mounts ?? [])],
    ...(input.launch.container === undefined ? {} : { container: { image: input.launch.container.image } }),
    ...(input.stateDir === undefined ? {} : { stateDir: input.stateDir }),
  };
}
