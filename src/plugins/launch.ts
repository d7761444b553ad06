/**
 * @module plugins/launch
 * How an installed plugin starts (seed 003: "we still store how to launch it"). In order:
 * 1. quiver.json `launch` (any command: `python`, `uvx`, `./server`… — never Node-specific);
 * 2. package.json `bin` (one entry, or the one named like the package, or the one asked for);
 * 3. package.json `main`, run with `node`;
 * else the install fails naming what is missing.
 *
 * The stored launch is relative: `cwd` is relative to the plugin's cache folder and a
 * command starting with `./` is resolved against the working folder when the plugin starts,
 * so the cache folder can be moved into place after discovery.
 */
import { readFile } from 'node:fs/promises';
import { join, normalize, posix } from 'node:path';
import { z } from 'zod';
import type { LaunchSpec } from '../core/plugin-metadata.ts';

/** A local plugin started as a child process speaking MCP over stdio. */
export interface StoredStdioLaunch {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Names of the credentials passed as environment variables. */
  env: string[];
  /** Working folder relative to the plugin's cache folder. */
  cwd: string;
}

/** A remote plugin reached over Streamable HTTP (SSE fallback). */
export interface StoredHttpLaunch {
  transport: 'http';
  url: string;
}

/** What the plugins table's `launch` column holds. */
export type StoredLaunch = StoredStdioLaunch | StoredHttpLaunch;

/** Why no launch could be made; the installer reports it as step `launch`. */
export class LaunchResolutionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LaunchResolutionError';
  }
}

/** The package.json fields the installer reads. */
export const packageJsonSchema = z.looseObject({
  name: z.string().optional(),
  version: z.string().optional(),
  description: z.string().optional(),
  main: z.string().optional(),
  bin: z.union([z.string(), z.record(z.string(), z.string())]).optional(),
});
export type PackageJson = z.output<typeof packageJsonSchema>;

/** Reads and parses `folder/package.json`; undefined when there is none or it is unreadable JSON. */
export async function readPackageJson(folder: string): Promise<PackageJson | undefined> {
  let text: string;
  try {
    text = await readFile(join(folder, 'package.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = packageJsonSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Inputs of `resolveLaunch`. */
export interface ResolveLaunchInput {
  /** The plugin's folder (the package folder for npm), absolute. */
  pluginFolder: string;
  /** The same folder relative to the cache folder (`.` or `node_modules/@scope/name`). */
  relativeFolder: string;
  /** quiver.json `launch`, already validated. */
  launch?: LaunchSpec | undefined;
  packageJson?: PackageJson | undefined;
  /** Which `bin` entry to run when the package has several. */
  binName?: string | undefined;
  /** Arguments appended to the command (e.g. the folder a filesystem server may serve). */
  extraArgs?: readonly string[] | undefined;
}

function inside(relativeFolder: string, sub: string): string {
  const joined = posix.normalize(posix.join(relativeFolder.split('\\').join('/'), sub.split('\\').join('/')));
  return joined === '' ? '.' : joined;
}

async function runsWithNode(file: string): Promise<boolean> {
  if (/\.(c|m)?js$/.test(file)) return true;
  try {
    const head = (await readFile(file, 'utf8')).slice(0, 200);
    return /^#!.*\bnode\b/.test(head);
  } catch {
    return false;
  }
}

/** Builds the stored launch of a local plugin, or throws LaunchResolutionError naming what is missing. */
export async function resolveLaunch(input: ResolveLaunchInput): Promise<StoredLaunch> {
  const extra = [...(input.extraArgs ?? [])];
  if (input.launch !== undefined) {
    const launch = input.launch;
    if (launch.transport === 'http') {
      if (launch.command !== undefined) {
        throw new LaunchResolutionError('quiver.json launch with transport "http" and a local command is not supported: install the running endpoint by its URL instead');
      }
      return { transport: 'http', url: launch.url! };
    }
    return {
      transport: 'stdio',
      command: launch.command!,
      args: [...(launch.args ?? []), ...extra],
      env: [...(launch.env ?? [])],
      cwd: inside(input.relativeFolder, launch.cwd ?? '.'),
    };
  }
  const pkg = input.packageJson;
  if (pkg?.bin !== undefined) {
    const unscoped = (pkg.name ?? '').split('/').pop() ?? '';
    let binPath: string | undefined;
    if (typeof pkg.bin === 'string') {
      binPath = pkg.bin;
    } else {
      const entries = Object.entries(pkg.bin);
      const chosen =
        input.binName !== undefined
          ? entries.find(([name]) => name === input.binName)
          : entries.length === 1
            ? entries[0]
            : entries.find(([name]) => name === unscoped);
      if (chosen === undefined) {
        const names = entries.map(([name]) => name).join(', ');
        throw new LaunchResolutionError(
          input.binName !== undefined
            ? `package.json has no bin named '${input.binName}' (it has: ${names})`
            : `package.json has several bin entries (${names}); choose one with --bin NAME`,
        );
      }
      binPath = chosen[1];
    }
    const file = normalize(binPath);
    if (file.startsWith('..')) throw new LaunchResolutionError(`package.json bin '${binPath}' points outside the package`);
    const node = await runsWithNode(join(input.pluginFolder, file));
    return node
      ? { transport: 'stdio', command: 'node', args: [file, ...extra], env: [], cwd: input.relativeFolder }
      : { transport: 'stdio', command: `./${file}`, args: extra, env: [], cwd: input.relativeFolder };
  }
  if (pkg?.main !== undefined) {
    const file = normalize(pkg.main);
    if (file.startsWith('..')) throw new LaunchResolutionError(`package.json main '${pkg.main}' points outside the package`);
    return { transport: 'stdio', command: 'node', args: [file, ...extra], env: [], cwd: input.relativeFolder };
  }
  throw new LaunchResolutionError(
    pkg === undefined
      ? 'no way to start the plugin: there is no quiver.json "launch" and no package.json with "bin" or "main"'
      : 'no way to start the plugin: quiver.json has no "launch" and package.json has neither "bin" nor "main"',
  );
}
