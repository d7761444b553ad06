/**
 * @module plugins/python/install
 * A Python MCP server installed the way it is published (issue #26): a virtual environment of
 * its own, `.quiver-venv` in the plugin's folder, so one per plugin version in the install cache
 * (a git commit's tree, or `pypi/<name>@<version>`), made on the host with the system Python
 * (interpreter.ts), then `pip install` of the project (`.`), its `requirements.txt`, or a
 * requirement from the index, run by the venv's pip INSIDE the sandbox: the folder writable, the
 * host read-only, the machine's pip configuration carried in (pip-config.ts) and no network but
 * the configured index hosts (none at all for a local index), so a build backend or a setup.py
 * runs contained.
 *
 * The venv is made in the staging folder and moved into place afterwards. That is safe because
 * nothing Quiver runs depends on its absolute path: the interpreter link points at the system
 * Python, `pyvenv.cfg` is found beside it, site-packages is relative to it, and a console
 * script is started as `python SCRIPT` (its shebang, which names the staging path, is unused).
 */
import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { QuiverError } from '../../core/errors.ts';
import type { OneShotRequest, OneShotResult } from '../../runtime/one-shot.ts';
import { MINIMAL_COMMAND_ENV } from '../command-env.ts';
import { readSourceFile, resolveInsideRoot } from '../source-files.ts';
import { findPython, type PythonInterpreter } from './interpreter.ts';
import { readPipConfig } from './pip-config.ts';

/** The venv's folder name inside the plugin's folder. */
export const VENV_FOLDER = '.quiver-venv';
/** The venv's interpreter, relative to the plugin's folder (a stored launch's command). */
export const VENV_PYTHON = `./${VENV_FOLDER}/bin/python`;

/** What kind of Python project a folder is, from its files. */
export type PythonProject = 'pyproject' | 'setup.py' | 'requirements';

/** The install step failed; `step` is `dependencies` as for npm trees. */
export class PythonInstallError extends QuiverError {
  constructor(reason: string, cause?: unknown) {
    super('install_failed', reason, { kind: 'user', details: { step: 'dependencies', reason }, cause });
  }
}

/** The folder's kind of Python project, or undefined when it is none (a package.json wins: that is a Node plugin). */
export async function detectPythonProject(root: string, relativeFolder: string): Promise<PythonProject | undefined> {
  const has = async (file: string) => {
    const path = await resolveInsideRoot(root, posix.join(relativeFolder, file)).catch(() => undefined);
    return path !== undefined && (await stat(path).then((info) => info.isFile(), () => false));
  };
  if (await has('package.json')) return undefined;
  if (await has('pyproject.toml')) return 'pyproject';
  if (await has('setup.py')) return 'setup.py';
  if (await has('requirements.txt')) return 'requirements';
  return undefined;
}

/** What to install into the venv. */
export type PythonTarget =
  /** The project in the plugin's folder (`pip install .`), or its requirements.txt. */
  | { kind: 'project'; project: PythonProject }
  /** A requirement from the configured index: `name` or `name==version`. */
  | { kind: 'index'; requirement: string; name: string };

/** Settings of an install. */
export interface PythonInstallSettings {
  /** Names the plugin in messages and sandbox labels. */
  label: string;
  /** The hub's environment: PATH to find python3, HOME and PIP_* for pip's configuration. */
  commandEnv?: Record<string, string | undefined> | undefined;
  timeoutMs: number;
  /** Runs pip in the sandbox; without it the install is refused (pip would run build code on the host). */
  runSandboxed?: ((request: OneShotRequest) => Promise<OneShotResult>) | undefined;
}

/** One distribution installed in the venv. */
export interface InstalledDistribution {
  name: string;
  version: string;
  /** console_scripts names → `module:function`. */
  consoleScripts: Record<string, string>;
  /** Top-level import names (top_level.txt, else the name with `_`). */
  modules: string[];
}

/** What the install produced. */
export interface PythonInstallResult {
  interpreter: PythonInterpreter;
  /** The distribution the plugin is (the requirement, or the project), when there is one. */
  distribution: InstalledDistribution | undefined;
  /** Where packages came from (credentials removed). */
  indexes: string[];
}

/** `Foo.Bar_baz` → `foo-bar-baz` (PEP 503). */
export function normalizeDistributionName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

function runHost(command: string, args: string[], env: Record<string, string | undefined>, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      reject(new PythonInstallError(`${what} failed: ${String(stderr || error.message).trim().split('\n').slice(-8).join('\n')}`, error));
    });
  });
}

/** pip's output without the noise of mirrors that lack a package. */
function pipTail(text: string): string {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !/is ignored: it is neither a file nor a directory/.test(line))
    .slice(-12)
    .join('\n')
    .replace(/(\/\/)[^/@\s]+@/g, '$1***@');
}

/**
 * Makes `<root>/<relativeFolder>/.quiver-venv` and installs `target` into it in the sandbox.
 * `root` is the writable tree (the staging folder of this install).
 */
export async function installPythonPlugin(root: string, relativeFolder: string, target: PythonTarget, settings: PythonInstallSettings): Promise<PythonInstallResult> {
  const env = settings.commandEnv ?? MINIMAL_COMMAND_ENV;
  if (settings.runSandboxed === undefined) {
    throw new PythonInstallError('installing a Python server runs its build in the sandbox, and no sandbox is available here (bubblewrap)');
  }
  const interpreter = await findPython(env);
  const folder = (await resolveInsideRoot(root, relativeFolder)) ?? join(root, relativeFolder);
  const venv = join(folder, VENV_FOLDER);
  // The standard library's venv and the pip it bundles: no code of the plugin's runs on the host.
  await runHost(interpreter.executable, ['-I', '-m', 'venv', venv], env, settings.timeoutMs, `python3 -m venv (Python ${interpreter.version})`);
  const pip = await readPipConfig(join(venv, 'bin', 'python'), env).catch((error: unknown) => {
    throw new PythonInstallError((error as Error).message, error);
  });
  const what =
    target.kind === 'index' ? target.requirement : target.project === 'requirements' ? `-r requirements.txt` : '.';
  const args = ['-m', 'pip', 'install', '--no-input', '--disable-pip-version-check', '--no-warn-script-location', '--progress-bar', 'off'];
  if (target.kind === 'index') args.push('--', target.requirement);
  else if (target.project === 'requirements') args.push('-r', 'requirements.txt');
  else args.push('.');
  const result = await settings.runSandboxed({
    label: `${settings.label} pip install`,
    command: join(venv, 'bin', 'python'),
    args,
    workDir: root,
    cwd: folder,
    env: { ...pip.env, PIP_CACHE_DIR: '/tmp/pip-cache', PYTHONNOUSERSITE: '1' },
    timeoutMs: settings.timeoutMs,
    readOnlyPaths: pip.readOnlyPaths,
    ...(pip.egress.length > 0 ? { egress: pip.egress } : {}),
  });
  const network = pip.egress.length > 0 ? `network limited to ${pip.egress.map((rule) => rule.host).join(', ')}` : 'no network';
  if (result.timedOut) throw new PythonInstallError(`pip install ${what} timed out after ${settings.timeoutMs} ms (${network})`);
  if (result.exitCode !== 0) {
    throw new PythonInstallError(
      `pip install ${what} exited with ${result.exitCode ?? result.signal} (${network}; indexes as pip is configured here: ${pip.sources.join(' ') || 'none'}): ${pipTail(result.outputTail)}`,
    );
  }
  const distribution = pickDistribution(await installedDistributions(venv), target);
  if (target.kind === 'index' && distribution === undefined) throw new PythonInstallError(`pip installed ${what}, but no distribution named ${target.name} is in the environment`);
  return { interpreter, distribution, indexes: pip.sources };
}

/** The distribution the plugin is: the requirement asked for, or the project installed from its folder. */
function pickDistribution(installed: readonly FoundDistribution[], target: PythonTarget): InstalledDistribution | undefined {
  if (target.kind === 'index') return installed.find((dist) => normalizeDistributionName(dist.name) === normalizeDistributionName(target.name));
  if (target.project === 'requirements') return undefined;
  const requested = installed.filter((dist) => dist.requested && !['pip', 'setuptools', 'wheel'].includes(normalizeDistributionName(dist.name)));
  return requested.find((dist) => dist.local) ?? (requested.length === 1 ? requested[0] : undefined);
}

/** The venv already in a cached folder (another install of the same commit made it). */
export async function describeInstalled(pluginFolder: string, project: PythonProject): Promise<PythonInstallResult> {
  const venv = join(pluginFolder, VENV_FOLDER);
  const config = await readSourceFile(pluginFolder, posix.join(VENV_FOLDER, 'pyvenv.cfg')).catch(() => undefined);
  if (config === undefined) {
    throw new PythonInstallError(`the cached folder ${pluginFolder} has no ${VENV_FOLDER} (another plugin of this commit uses a different --path); remove it with 'quiver plugin gc' or install that plugin again`);
  }
  const version = /^\s*version(_info)?\s*=\s*(\S+)/m.exec(config)?.[2] ?? 'unknown';
  return { interpreter: { executable: 'venv', version }, distribution: pickDistribution(await installedDistributions(venv), { kind: 'project', project }), indexes: [] };
}

interface FoundDistribution extends InstalledDistribution {
  /** Named on pip's command line (pip writes REQUESTED). */
  requested: boolean;
  /** Installed from a local folder (direct_url.json with a file: URL). */
  local: boolean;
}

/** The site-packages folder of a venv (`lib/pythonX.Y/site-packages`). */
export async function sitePackages(venv: string): Promise<string | undefined> {
  const lib = join(venv, 'lib');
  const versions = (await readdir(lib).catch(() => [] as string[])).filter((name) => /^python3\.\d+$/.test(name));
  return versions.length === 1 ? join(lib, versions[0]!, 'site-packages') : undefined;
}

/** Reads the .dist-info folders of a venv (written by pip in the sandbox: read as files, never executed). */
export async function installedDistributions(venv: string): Promise<FoundDistribution[]> {
  const site = await sitePackages(venv);
  if (site === undefined) return [];
  const found: FoundDistribution[] = [];
  for (const entry of await readdir(site)) {
    if (!entry.endsWith('.dist-info')) continue;
    const read = (file: string) => readSourceFile(site, posix.join(entry, file), { maxBytes: 4 * 1024 * 1024 }).catch(() => undefined);
    const metadata = (await read('METADATA')) ?? '';
    const name = /^Name:\s*(.+)$/m.exec(metadata)?.[1]?.trim();
    const version = /^Version:\s*(.+)$/m.exec(metadata)?.[1]?.trim();
    if (name === undefined || version === undefined) continue;
    const directUrl = await read('direct_url.json');
    const topLevel = (await read('top_level.txt'))?.split('\n').map((line) => line.trim()).filter((line) => /^[A-Za-z_]\w*$/.test(line));
    found.push({
      name,
      version,
      consoleScripts: consoleScripts((await read('entry_points.txt')) ?? ''),
      modules: topLevel !== undefined && topLevel.length > 0 ? topLevel : [normalizeDistributionName(name).replace(/-/g, '_')],
      requested: (await read('REQUESTED')) !== undefined,
      local: directUrl !== undefined && /"url"\s*:\s*"file:/.test(directUrl),
    });
  }
  return found;
}

/** The `[console_scripts]` section of an entry_points.txt. */
export function consoleScripts(text: string): Record<string, string> {
  const scripts: Record<string, string> = {};
  let inSection = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) {
      inSection = line === '[console_scripts]';
      continue;
    }
    const match = inSection ? /^([^=\s][^=]*?)\s*=\s*(.+)$/.exec(line) : null;
    if (match !== null) scripts[match[1]!] = match[2]!;
  }
  return scripts;
}

/** Reads a file of the venv relative to the plugin folder; used to check a script exists. */
export async function venvFileExists(pluginFolder: string, relativePath: string): Promise<boolean> {
  const path = await resolveInsideRoot(pluginFolder, relativePath).catch(() => undefined);
  return path !== undefined && (await stat(path).then((info) => info.isFile(), () => false));
}
