/**
 * @module plugins/python/entry-point
 * How an installed Python plugin starts, from its package metadata (issue #26), in the order
 * `uvx NAME` would pick it:
 * 1. the console script asked for (`--bin NAME`);
 * 2. the distribution's only console script, or the one named like the distribution;
 * 3. `python -m MODULE` for a top-level module with a `__main__.py` (the import name of
 *    `python -m` entries);
 * else the install fails naming the scripts there are. The script is run as
 * `.quiver-venv/bin/python .quiver-venv/bin/NAME`: the venv's interpreter, never the script's
 * shebang (which names the staging folder it was installed in).
 */
import { posix } from 'node:path';
import type { InstalledDistribution } from './install.ts';
import { normalizeDistributionName, VENV_FOLDER, VENV_PYTHON, venvFileExists, sitePackages } from './install.ts';

/** A launch command and its arguments, relative to the plugin's folder. */
export interface PythonLaunch {
  command: string;
  args: string[];
}

/** The entry point could not be chosen. */
export class PythonEntryPointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PythonEntryPointError';
  }
}

const MODULE_NAME = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/;

/** `python -m MODULE` as a launch; the module name is checked (it comes from a client file or metadata). */
export function moduleLaunch(module: string): PythonLaunch {
  if (!MODULE_NAME.test(module)) throw new PythonEntryPointError(`'${module}' is not a Python module name`);
  return { command: VENV_PYTHON, args: ['-m', module] };
}

/** Chooses how `distribution` starts; `pluginFolder` is the folder holding `.quiver-venv`. */
export async function chooseEntryPoint(pluginFolder: string, distribution: InstalledDistribution, binName: string | undefined): Promise<PythonLaunch> {
  const scripts = Object.keys(distribution.consoleScripts);
  const normalized = normalizeDistributionName(distribution.name);
  let chosen: string | undefined;
  if (binName !== undefined) {
    if (!scripts.includes(binName)) {
      throw new PythonEntryPointError(`${distribution.name} has no console script named '${binName}' (it has: ${scripts.join(', ') || 'none'})`);
    }
    chosen = binName;
  } else if (scripts.length === 1) chosen = scripts[0];
  else chosen = scripts.find((script) => normalizeDistributionName(script) === normalized);
  if (chosen !== undefined) {
    const script = posix.join(VENV_FOLDER, 'bin', chosen);
    if (!/^[\w.-]+$/.test(chosen) || !(await venvFileExists(pluginFolder, script))) {
      throw new PythonEntryPointError(`the console script '${chosen}' of ${distribution.name} was not installed as a file of the environment`);
    }
    return { command: VENV_PYTHON, args: [script] };
  }
  if (scripts.length > 1) throw new PythonEntryPointError(`${distribution.name} has several console scripts (${scripts.join(', ')}); choose one with --bin NAME`);
  const site = await sitePackages(posix.join(pluginFolder, VENV_FOLDER));
  for (const module of distribution.modules) {
    if (site !== undefined && (await venvFileExists(site, posix.join(module, '__main__.py')))) return moduleLaunch(module);
  }
  throw new PythonEntryPointError(
    `${distribution.name} has no console script and no module with a __main__.py: add a quiver.json "launch" (e.g. {"command": "python", "args": ["-m", "your_module"]})`,
  );
}

/**
 * A quiver.json launch of a Python plugin whose command is `python`/`python3`: run by the
 * plugin's venv instead of whatever python the sandbox's PATH has (which has no dependencies).
 */
export function viaVenv(command: string): string | undefined {
  return /^python(3(\.\d+)?)?$/.test(command) ? VENV_PYTHON : undefined;
}
