/**
 * @module plugins/install/fetch-python
 * Step 1 of an install for Python servers (issue #26): a requirement from the package index
 * (`pypi:NAME[==VERSION]`, what `uvx NAME` runs) installed into a venv of its own, cached as
 * `<cacheDir>/pypi/<name>@<version>`; and a cloned git tree that is a Python project
 * (pyproject.toml, setup.py or requirements.txt) given a venv beside its code. Both record how
 * the server starts (`pythonLaunch`, from the package metadata: python/entry-point.ts), which
 * a quiver.json `launch` still overrides. A local folder that is a Python project without a
 * venv of its own is copied into the cache keyed by its content hash and given one there
 * (python/folder-copy.ts).
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { QuiverError } from '../../core/errors.ts';
import { chooseEntryPoint, PythonEntryPointError, type PythonLaunch } from '../python/entry-point.ts';
import { copyProjectFolder, FolderCopyError } from '../python/folder-copy.ts';
import { describeInstalled, installPythonPlugin, type PythonProject, type PythonInstallResult } from '../python/install.ts';
import type { InstallerSettings, InstallRequest } from './types.ts';
import type { FailStep } from './failure.ts';
import type { FetchedSource } from './types.ts';
import type { Staging } from './staging.ts';

interface Input {
  request: InstallRequest;
  settings: InstallerSettings;
  staging: Staging;
  fail: FailStep;
}

function pythonSettings({ request, settings }: Input) {
  return { label: request.name, commandEnv: settings.commandEnv, timeoutMs: settings.npmTimeoutMs, runSandboxed: settings.runSandboxed };
}

async function installOrFail(input: Input, run: () => Promise<PythonInstallResult>): Promise<PythonInstallResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof QuiverError) throw input.fail('dependencies', error.message, { cause: error });
    throw error;
  }
}

/** The launch from the package metadata (none for a requirements.txt project). */
async function entryPoint(input: Input, folder: string, installed: PythonInstallResult): Promise<PythonLaunch | undefined> {
  try {
    if (installed.distribution === undefined) return undefined;
    return await chooseEntryPoint(folder, installed.distribution, input.request.bin);
  } catch (error) {
    if (error instanceof PythonEntryPointError) throw input.fail('launch', error.message);
    throw error;
  }
}

/** `pypi:NAME[==VERSION]`: a venv in staging with the requirement installed, its entry point chosen. */
export async function fetchPypi(input: Input, source: { requirement: string; name: string }): Promise<FetchedSource> {
  const { settings, staging } = input;
  const tree = join(await staging.ensure('pypi'), 'tree');
  await mkdir(tree, { mode: 0o755 });
  const installed = await installOrFail(input, () => installPythonPlugin(tree, '.', { kind: 'index', requirement: source.requirement, name: source.name }, pythonSettings(input)));
  const distribution = installed.distribution!;
  const launch = await entryPoint(input, tree, installed);
  const finalPath = join(settings.cacheDir, 'pypi', `${distribution.name.toLowerCase().replace(/[^a-z0-9._-]/g, '_')}@${distribution.version.replace(/[^A-Za-z0-9.+!_-]/g, '_')}`);
  return {
    // A venv is not shared between installs: an existing folder of the same version is used as is.
    root: (await isFolder(finalPath)) ? finalPath : tree,
    finalPath,
    relativeFolder: '.',
    inPlace: false,
    sourceType: 'pypi',
    sourceRecord: {
      requirement: source.requirement,
      packageName: distribution.name,
      version: distribution.version,
      python: installed.interpreter.version,
      indexes: installed.indexes,
      ...(launch !== undefined ? { pythonLaunch: launch } : {}),
    },
    revision: undefined,
    packageVersion: distribution.version,
    warnings: [],
  };
}

async function isFolder(path: string): Promise<boolean> {
  return stat(path).then((info) => info.isDirectory(), () => false);
}

/** What a Python git tree adds to its fetch: the launch and version from the installed project. */
export interface PythonCheckout {
  sourceExtras: Record<string, unknown>;
  packageVersion: string | undefined;
  warnings: string[];
}

/**
 * Gives a cloned Python tree its venv (in the sandbox) and finds its entry point; with `install`
 * false (the commit's folder is already in the cache) reads the venv that is there.
 */
export async function buildPythonCheckout(input: Input, tree: string, relativeFolder: string, project: PythonProject, install: boolean): Promise<PythonCheckout> {
  const folder = join(tree, relativeFolder);
  const installed = install
    ? await installOrFail(input, () => installPythonPlugin(tree, relativeFolder, { kind: 'project', project }, pythonSettings(input)))
    : await installOrFail(input, () => describeInstalled(folder, project));
  const launch = await entryPoint(input, folder, installed);
  return {
    sourceExtras: {
      python: installed.interpreter.version,
      indexes: installed.indexes,
      ...(installed.distribution !== undefined ? { packageName: installed.distribution.name, version: installed.distribution.version } : {}),
      ...(launch !== undefined ? { pythonLaunch: launch } : {}),
    },
    packageVersion: installed.distribution?.version,
    warnings: project === 'requirements' && launch === undefined ? ['a requirements.txt project: its quiver.json "launch" starts it (python there is the plugin\'s venv)'] : [],
  };
}

/**
 * A local folder that is a Python project (and has no venv of its own): copied into staging with
 * its content hash, given a venv there, placed at `<cacheDir>/pyfolder/<hash>`; an existing
 * folder of the same hash (same content) is used as is. The user's folder is never written to.
 */
export async function fetchPythonFolder(input: Input, path: string, project: PythonProject): Promise<FetchedSource> {
  const { settings, staging, fail } = input;
  const tree = join(await staging.ensure('pyfolder'), 'tree');
  await mkdir(tree, { mode: 0o755 });
  let copied;
  try {
    copied = await copyProjectFolder(path, tree);
  } catch (error) {
    if (error instanceof FolderCopyError) throw fail('launch', `${path}: ${error.message}`);
    throw error;
  }
  const finalPath = join(settings.cacheDir, 'pyfolder', copied.hash.slice(0, 24));
  const reuse = await isFolder(finalPath);
  const root = reuse ? finalPath : tree;
  const built = await buildPythonCheckout(input, root, '.', project, !reuse);
  return {
    root,
    finalPath,
    relativeFolder: '.',
    // A copy in the cache: released like any version folder; the user's folder is untouched.
    inPlace: false,
    sourceType: 'path',
    sourceRecord: { path, folderHash: copied.hash, ...built.sourceExtras },
    revision: copied.hash.slice(0, 12),
    packageVersion: built.packageVersion,
    warnings: built.warnings,
  };
}
