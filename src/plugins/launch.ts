/**
 * @module plugins/launch
 * How an installed plugin starts (seed 003: "we still store how to launch it"). In order:
 * 1. quiver.json `launch` (any command: `python`, `uvx`, `./server`… — never Node-specific; a
 *    virtual environment's `bin/python`, a link to the system Python, is allowed: python/venv-link.ts);
 * 2. package.json `bin` (one entry, or the one named like the package, or the one asked for);
 * 3. package.json `main`, run with `node`;
 * else the install fails naming what is missing.
 *
 * The stored launch is relative: `cwd` is relative to the plugin's cache folder and a
 * command starting with `./` is resolved against the working folder when the plugin starts,
 * so the cache folder can be moved into place after discovery.
 */
import { isAbsolute, normalize, posix } from 'node:path';
import { z } from 'zod';
import type { LaunchSpec } from '../core/plugin-metadata.ts';
import { parseSourceJson, readSourceFile, readSourceHead, resolveInsideRoot, SourceFileError } from './source-files.ts';
import { isVenvInterpreter } from './python/venv-link.ts';

/** A local plugin started as a child process speaking MCP over stdio. */
export interface StoredStdioLaunch {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Names of the credentials passed as environment variables. */
  env: string[];
  /** Working folder relative to the plugin's cache folder. */
  cwd: string;
  /** The plugin is this container image (`command` is then only a label; runtime/container.ts, issue #26). */
  container?: { image: string } | undefined;
}

/** A remote plugin reached over Streamable HTTP (SSE fallback). */
export interface StoredHttpLaunch {
  transport: 'http';
  url: string;
}

/** A REST API served by the MCP server Quiver generates from its OpenAPI document (issue #14). */
export interface StoredOpenApiLaunch {
  transport: 'openapi';
  /** The pinned, bundled document, relative to the plugin's cache folder. */
  document: string;
  /** The API root every operation path is appended to. */
  baseUrl: string;
}

/** What the plugins table's `launch` column holds. */
export type StoredLaunch = StoredStdioLaunch | StoredHttpLaunch | StoredOpenApiLaunch;

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

/**
 * Reads and parses `<relativeFolder>/package.json` under `root`; undefined when there is none or
 * it is not JSON of the expected shape. Throws SourceFileError when it links out of `root`.
 */
export async function readPackageJson(root: string, relativeFolder: string): Promise<PackageJson | undefined> {
  const text = await readSourceFile(root, posix.join(relativeFolder, 'package.json'));
  if (text === undefined) return undefined;
  const json = parseSourceJson(text, 'package.json');
  if (!('value' in json)) return undefined;
  const parsed = packageJsonSchema.safeParse(json.value);
  return parsed.success ? parsed.data : undefined;
}

/** Inputs of `resolveLaunch`. */
export interface ResolveLaunchInput {
  /** The plugin's cache folder (or its own folder for a path source), absolute: nothing may lead out of it. */
  root: string;
  /** The plugin's folder relative to `root` (`.` or `node_modules/@scope/name`). */
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

async function runsWithNode(root: string, file: string): Promise<boolean> {
  if (/\.(c|m)?js$/.test(file)) return true;
  const head = await readSourceHead(root, file, 200).catch((error: unknown) => {
    if (error instanceof SourceFileError) throw error;
    return undefined;
  });
  return head !== undefined && /^#!.*\bnode\b/.test(head);
}

/**
 * The plugin's own parts of a stdio launch (its working folder, a `./command`, and the
 * arguments the plugin ships, e.g. the entry file) must stay inside `root`, links included:
 * otherwise an unsandboxed start would run or serve a host file (issue #18 finding 4).
 * Arguments the admin adds (`extraArgs`, often absolute paths to serve) are not the plugin's.
 */
async function assertLaunchInside(root: string, launch: StoredStdioLaunch, pluginArgs: readonly string[]): Promise<void> {
  const refuse = (what: string): never => {
    throw new LaunchResolutionError(`the launch ${what} leads outside the plugin's folder (a link or a path out of it); refused`);
  };
  const check = async (relative: string, what: string): Promise<void> => {
    if (isAbsolute(relative)) refuse(what);
    try {
      await resolveInsideRoot(root, relative);
    } catch (error) {
      if (error instanceof SourceFileError) refuse(what);
      throw error;
    }
  };
  await check(launch.cwd, 'working folder');
  if (launch.command.startsWith('./') || launch.command.startsWith('../')) {
    const command = posix.join(launch.cwd, launch.command);
    // A virtual environment's interpreter links to the system Python by design (issue #26).
    if (!(await isVenvInterpreter(root, command))) await check(command, 'command');
  }
  for (const arg of pluginArgs) {
    // Options and absolute paths are not files of the plugin (absolute ones are not its to name).
    if (arg.startsWith('-') || isAbsolute(arg) || arg.includes('\0')) continue;
    await check(posix.join(launch.cwd, arg), `argument '${arg}'`);
  }
}

/** Builds the stored launch of a local plugin, or throws LaunchResolutionError naming what is missing or refused. */
export async function resolveLaunch(input: ResolveLaunchInput): Promise<StoredLaunch> {
  const launch = await buildLaunch(input);
  if (launch.transport === 'stdio') {
    const extraCount = input.extraArgs?.length ?? 0;
    await assertLaunchInside(input.root, launch, launch.args.slice(0, launch.args.length - extraCount));
  }
  return launch;
}

async function buildLaunch(input: ResolveLaunchInput): Promise<StoredLaunch> {
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
    const node = await runsWithNode(input.root, inside(input.relativeFolder, file));
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
