/**
 * @module plugins/import-container
 * Containers, honestly (issue #26). An imported `docker run … IMAGE ARGS` (or `podman run`)
 * entry is parsed and its command translated to the sandbox's rules: no capabilities
 * (`--cap-drop ALL`), no privilege gain (`--security-opt no-new-privileges`), a read-only root
 * with a small /tmp, the unprivileged user, bounded memory and processes, no network unless
 * the plugin's egress is allowed, bind mounts only for the config's host folders (read-only
 * where it said `:ro`), credentials passed by name (`-e KEY`, the value in the environment,
 * never on a command line) and `-i` for stdio. Options that would loosen those rules
 * (`--privileged`, `--cap-add`, `--network host`, …) are refused or dropped with a warning.
 *
 * What runs here: the parsing and translation (unit-tested) and the refusal. Starting the
 * translated command as a plugin process is not built: it needs a container engine, which the
 * machines this is built and tested on do not have, so it could not be tested. Every container
 * entry is refused, with the exact command that runs it under the sandbox's rules (after
 * installing an engine, when there is none) behind an HTTP endpoint Quiver then adds, or the
 * hosted HTTP server of a well-known image.
 */
import { spawnSync } from 'node:child_process';
import { findExecutable } from '../runtime/sandbox.ts';

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
  /** Environment names the container gets (`-e KEY` or `-e KEY=VALUE`; values never kept here). */
  envNames: string[];
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
      if (value.includes('=')) warnings.push(`-e ${name}=… on the command line: passed by name instead, its value from the entry's env`);
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
  return { engine, image, args: args.slice(index + 1), envNames: [...new Set(envNames)], mounts, warnings };
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

/** A container engine on PATH, and why it cannot run containers when it cannot. */
export interface DetectedEngine {
  name: 'docker' | 'podman';
  path: string;
  problem: string | undefined;
}

/** Finds docker and podman and asks each whether it can run containers (`info`; a docker client without its daemon cannot). */
export function detectEngines(searchPath?: string | undefined): DetectedEngine[] {
  const found: DetectedEngine[] = [];
  for (const name of ['docker', 'podman'] as const) {
    const path = findExecutable(name, searchPath);
    if (path === undefined) continue;
    const probe = spawnSync(path, ['info', '--format', '{{json .}}'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'ignore', 'pipe'] });
    const reason = (probe.stderr ?? '').trim().split('\n').pop() || probe.error?.message || `'${name} info' exited ${probe.status}`;
    found.push({ name, path, problem: probe.status === 0 ? undefined : `cannot run containers (${reason.slice(0, 200)})` });
  }
  return found;
}

/** Shell quoting for the printed command (a value with spaces or quotes stays one argument). */
function quoted(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Hosted HTTP equivalents of well-known images (the alternative that needs no engine). */
const HOSTED: Array<{ image: RegExp; url: string; header: string }> = [
  { image: /^ghcr\.io\/github\/github-mcp-server(:|$)/, url: 'https://api.githubcopilot.com/mcp/', header: "--header 'Authorization=Bearer YOUR_TOKEN'" },
];

/**
 * The refusal of a container entry, with what makes it work: the engine to install and the
 * translated command Quiver would run, or the HTTP alternative.
 */
export function planContainerEntry(
  engine: 'docker' | 'podman',
  args: readonly string[],
  context: { plugin: string; file?: string | undefined; searchPath?: string | undefined },
): { reason: string } {
  const run = parseContainerRun(engine, args);
  if ('reason' in run) return run;
  const engines = detectEngines(context.searchPath);
  const present = engines.find((found) => found.problem === undefined);
  const command = [present?.name ?? engine, ...containerRunArgs(run, { egress: false })].map(quoted).join(' ');
  const hosted = HOSTED.find((entry) => entry.image.test(run.image));
  const http = hosted
    ? `or use the hosted server: 'quiver plugin add ${hosted.url} --name ${context.plugin} ${hosted.header}'`
    : 'or use an HTTP endpoint its publisher hosts';
  if (present === undefined) {
    const broken = engines.map((found) => `${found.name} is installed but ${found.problem}`).join('; ');
    return {
      reason:
        `a container (${run.image}) and no working container engine here (${broken || 'neither docker nor podman is on PATH'}). ` +
        `Start or install one (e.g. 'apt-get install -y podman') ` +
        `and run it under the sandbox's rules as: ${command} — it speaks stdio: put it behind a stdio-to-HTTP bridge, then 'quiver plugin add http://HOST:PORT/mcp --name ${context.plugin}'; ${http}`,
    };
  }
  return {
    reason: `a container (${run.image}): Quiver does not start containers as plugins yet; run it under the sandbox's rules as: ${command} — it speaks stdio: put it behind a stdio-to-HTTP bridge, then 'quiver plugin add http://HOST:PORT/mcp --name ${context.plugin}'; ${http}`,
  };
}
