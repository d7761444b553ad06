/**
 * @module plugins/import-container
 * Containers, honestly (issue #26). An imported `docker run … IMAGE ARGS` (or `podman run`)
 * entry is parsed and checked against the sandbox's rules: options that would loosen them
 * (`--privileged`, `--cap-add`, devices, host namespaces, `-d`) refuse the entry; options the
 * sandbox sets itself (network, user, limits, ports, names…) are replaced, with a warning.
 *
 * When a container engine runs here (docker with its daemon, or podman; probed with `info`), the
 * entry becomes a `container:IMAGE` plugin (runtime/container.ts runs it under the translated
 * rules): the config's bind mounts become host-path grants (read-only where it said so), bound
 * at the host path inside the container, and arguments naming the container-side path are
 * rewritten to the host path; `-e KEY` / `-e KEY=VALUE` and the entry's `env` become the
 * plugin's secrets, passed by name. When no engine runs, the entry is refused with the exact
 * command that runs it under the sandbox's rules, and the HTTP alternative.
 */
import { spawnSync } from 'node:child_process';
import { defaultSearchPath } from '../runtime/host-detection.ts';
import { detectEngines as detectRuntimeEngines, type DetectedEngine } from '../runtime/container.ts';

/** A bind mount of the config's `-v HOST:CONTAINER[:ro]` / `--mount type=bind,…`. */
export interface ContainerMount {
  host: string;
  container: string;
  mode: 'ro' | 'rw';
}

/** A parsed `docker run` line. */
export interface ContainerRun {
  engine: 'docker' | 'podman';
  image: string;
  /** Arguments after the image (the server's own). */
  args: string[];
  /** Environment names the container gets (`-e KEY` or `-e KEY=VALUE`). */
  envNames: string[];
  /** Values given on the command line (`-e KEY=VALUE`): kept as secrets, never printed. */
  inlineEnv: Record<string, string>;
  mounts: ContainerMount[];
  warnings: string[];
}

/** Options taking a value (as the next argument, or `--opt=value`). */
const WITH_VALUE = new Set([
  '-e', '--env', '-v', '--volume', '--mount', '--network', '--net', '--name', '-p', '--publish', '--env-file', '-w', '--workdir', '--entrypoint',
  '-u', '--user', '--platform', '--pull', '-l', '--label', '--cap-add', '--cap-drop', '--security-opt', '-m', '--memory', '--cpus', '--pids-limit',
  '--add-host', '-h', '--hostname', '--tmpfs', '--device', '--ipc', '--pid', '--userns', '--uts',
]);
/** Flags the translation sets itself, or that do not matter for a stdio server. */
const HARMLESS_FLAGS = new Set(['-i', '--interactive', '--rm', '-t', '--tty', '--init', '-it', '-ti', '--read-only', '-q', '--quiet']);
/** Options whose value the translation replaces by its own rule. */
const REPLACED = new Set(['--name', '-p', '--publish', '-u', '--user', '--cap-drop', '--security-opt', '-m', '--memory', '--cpus', '--pids-limit', '--pull', '-l', '--label', '--add-host', '-h', '--hostname', '--tmpfs', '--platform', '-w', '--workdir', '--entrypoint']);
/** Options that would loosen the sandbox's rules: the entry is refused. */
const REFUSED = new Set(['--privileged', '--cap-add', '--device', '--ipc', '--pid', '--userns', '--uts', '-d', '--detach']);

function mountFrom(value: string, option: string): ContainerMount | { reason: string } {
  if (option === '--mount') {
    const fields = Object.fromEntries(value.split(',').map((pair) => {
      const at = pair.indexOf('=');
      return at < 0 ? [pair, 'true'] : [pair.slice(0, at), pair.slice(at + 1)];
    }));
    if ((fields['type'] ?? 'volume') !== 'bind') return { reason: `--mount ${value}: only bind mounts of host folders are carried over` };
    const host = fields['src'] ?? fields['source'];
    const container = fields['dst'] ?? fields['destination'] ?? fields['target'];
    if (host === undefined || container === undefined) return { reason: `--mount ${value}: needs src and dst` };
    const readOnly = fields['readonly'] !== undefined || fields['ro'] !== undefined;
    return { host, container, mode: readOnly ? 'ro' : 'rw' };
  }
  const [host, container, flags] = value.split(':');
  if (host === undefined || container === undefined || !host.startsWith('/')) return { reason: `-v ${value}: a named volume or relative path; give an absolute host folder` };
  return { host, container, mode: (flags ?? '').split(',').includes('ro') ? 'ro' : 'rw' };
}

/** Parses `run …` of a docker or podman entry; a reason when it cannot be carried over safely. */
export function parseContainerRun(engine: 'docker' | 'podman', args: readonly string[]): ContainerRun | { reason: string } {
  if (args[0] !== 'run') return { reason: `${engine} ${args[0] ?? ''}: only '${engine} run … IMAGE' entries can become plugins` };
  const envNames: string[] = [];
  const inlineEnv: Record<string, string> = {};
  const mounts: ContainerMount[] = [];
  const warnings: string[] = [];
  let index = 1;
  for (; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === '--') {
      index += 1;
      break;
    }
    if (!arg.startsWith('-')) break;
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const option = equals > 0 ? arg.slice(0, equals) : arg;
    if (REFUSED.has(option)) return { reason: `${engine} run ${option} would loosen the sandbox's rules (no privileges, no devices, own namespaces): not carried over` };
    if (HARMLESS_FLAGS.has(option)) continue;
    if (!WITH_VALUE.has(option)) return { reason: `unknown ${engine} run option '${option}': not translated` };
    const value = equals > 0 ? arg.slice(equals + 1) : args[++index];
    if (value === undefined) return { reason: `${engine} run ${option} needs a value` };
    if (option === '-e' || option === '--env') {
      const name = value.split('=')[0]!;
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return { reason: `-e ${name}: not an environment-variable name` };
      envNames.push(name);
      if (value.includes('=')) {
        inlineEnv[name] = value.slice(name.length + 1);
        warnings.push(`-e ${name}=… on the command line: passed by name instead, its value kept as a secret`);
      }
    } else if (option === '-v' || option === '--volume' || option === '--mount') {
      const mount = mountFrom(value, option);
      if ('reason' in mount) return mount;
      mounts.push(mount);
    } else if (option === '--network' || option === '--net') {
      if (value !== 'none') warnings.push(`--network ${value} is replaced: no network unless the plugin's egress is allowed`);
    } else if (option === '--env-file') {
      warnings.push(`--env-file ${value} is not read: set its variables with 'quiver plugin secret set'`);
    } else if (REPLACED.has(option)) {
      warnings.push(`${option} ${value} is replaced by the sandbox's own rule`);
    }
  }
  const image = args[index];
  if (image === undefined) return { reason: `${engine} run without an image` };
  return { engine, image, args: args.slice(index + 1), envNames: [...new Set(envNames)], inlineEnv, mounts, warnings };
}

/**
 * The translated `run` arguments (after the engine): the sandbox's rules for a container.
 * `egress`: the plugin's egress is allowed (it then gets the engine's default network).
 */
export function containerRunArgs(run: ContainerRun, options: { egress: boolean; memoryMb?: number; pids?: number }): string[] {
  return [
    'run', '--rm', '-i',
    '--cap-drop', 'ALL',
    '--security-opt', 'no-new-privileges',
    '--read-only',
    '--tmpfs', '/tmp:rw,nosuid,nodev,size=64m',
    '--user', '65534:65534',
    '--memory', `${options.memoryMb ?? 512}m`,
    '--pids-limit', String(options.pids ?? 256),
    '--network', options.egress ? 'bridge' : 'none',
    ...run.envNames.flatMap((name) => ['-e', name]),
    ...run.mounts.flatMap((mount) => ['--mount', `type=bind,src=${mount.host},dst=${mount.container}${mount.mode === 'ro' ? ',readonly' : ''}`]),
    run.image,
    ...run.args,
  ];
}

export type { DetectedEngine };

/** Finds docker and podman and asks each whether it can run containers (runtime/container.ts; probed once per process). */
export function detectEngines(searchPath?: string | undefined): DetectedEngine[] {
  return detectRuntimeEngines(searchPath ?? process.env['PATH'] ?? defaultSearchPath);
}

/** Shell quoting for the printed command (a value with spaces or quotes stays one argument). */
function quoted(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Hosted HTTP equivalents of well-known images (the alternative that needs no engine). */
const HOSTED: Array<{ image: RegExp; url: string; header: string }> = [
  { image: /^ghcr\.io\/github\/github-mcp-server(:|$)/, url: 'https://api.githubcopilot.com/mcp/', header: "--header 'Authorization=Bearer YOUR_TOKEN'" },
];

/** What an importable container entry installs: `container:IMAGE` with its arguments, secrets and grants. */
export interface ContainerImport {
  source: string;
  args: string[];
  /** The entry's `env` and `-e KEY=VALUE` values: the plugin's secrets. */
  secrets: Record<string, string>;
  mounts: Array<{ path: string; mode: 'ro' | 'rw' }>;
  /** Set when the engine does not have the image yet (the import pulls it). */
  pull: boolean;
  warnings: string[];
}

/** A container-side path in an argument becomes the host path it is bound at (same path inside). */
function rewritePath(arg: string, mounts: readonly ContainerMount[]): string {
  const at = arg.startsWith('-') ? arg.indexOf('=') + 1 : 0;
  if (arg.startsWith('-') && at === 0) return arg;
  const value = arg.slice(at);
  // The deepest container path first: `/projects/a` before `/projects`.
  for (const mount of [...mounts].sort((a, b) => b.container.length - a.container.length)) {
    const target = mount.container.replace(/\/+$/, '') || '/';
    if (value === target || value.startsWith(`${target}/`)) return `${arg.slice(0, at)}${mount.host}${value.slice(target.length)}`;
  }
  return arg;
}

/** True when the engine already has the image (no pull needed). */
function hasImage(engine: DetectedEngine, image: string): boolean {
  return spawnSync(engine.path, ['image', 'inspect', '--format', '{{.Id}}', image], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

/**
 * Plans a container entry: with a working engine, the plugin to install; without one, the
 * refusal with what makes it work (the engine to install and the command Quiver would run it
 * with, or the HTTP alternative).
 */
export function planContainerEntry(
  engine: 'docker' | 'podman',
  args: readonly string[],
  context: { plugin: string; env?: Record<string, string> | undefined; file?: string | undefined; searchPath?: string | undefined },
): { reason: string } | { install: ContainerImport } {
  const run = parseContainerRun(engine, args);
  if ('reason' in run) return run;
  const engines = detectEngines(context.searchPath);
  const present = engines.find((found) => found.problem === undefined);
  if (present !== undefined) {
    const warnings = [...run.warnings];
    for (const mount of run.mounts) {
      if (mount.container !== mount.host) warnings.push(`${mount.host} is bound at the same path inside the container (a grant keeps its path), not at ${mount.container}; arguments naming ${mount.container} now name ${mount.host}`);
    }
    const secrets = { ...(context.env ?? {}), ...run.inlineEnv };
    const unset = run.envNames.filter((name) => secrets[name] === undefined);
    if (unset.length > 0) warnings.push(`-e ${unset.join(', ')} has no value in this configuration: set it with 'quiver plugin secret set ${context.plugin} NAME VALUE'`);
    return {
      install: {
        source: `container:${run.image}`,
        args: run.args.map((arg) => rewritePath(arg, run.mounts)),
        secrets,
        mounts: run.mounts.map((mount) => ({ path: mount.host, mode: mount.mode })),
        pull: !hasImage(present, run.image),
        warnings,
      },
    };
  }
  const command = [engine, ...containerRunArgs(run, { egress: false })].map(quoted).join(' ');
  const hosted = HOSTED.find((entry) => entry.image.test(run.image));
  const http = hosted
    ? `or use the hosted server: 'quiver plugin add ${hosted.url} --name ${context.plugin} ${hosted.header}'`
    : 'or use an HTTP endpoint its publisher hosts';
  const broken = engines.map((found) => `${found.name} is installed but ${found.problem}`).join('; ');
  return {
    reason:
      `a container (${run.image}) and no working container engine here (${broken || 'neither docker nor podman is on PATH'}). ` +
      `Start or install one (e.g. 'apt-get install -y podman') and import again: Quiver then runs it as a plugin under the sandbox's rules, as ${command}; ${http}`,
  };
}
