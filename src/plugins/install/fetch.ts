/**
 * @module plugins/install/fetch
 * Step 1 of an install, one function per source kind: a git repository is cloned at its ref
 * (then its dependencies installed and its build run in the sandbox, source-build.ts, or for a
 * Python project its venv made, fetch-python.ts), an npm package installed, a package from the
 * Python index installed into a venv (fetch-python.ts), a folder used in place, a remote URL only checked; a re-install reuses
 * the installed cache folder. Git and npm land in the staging folder; `finalPath` is where the
 * tree will live (`<cacheDir>/git/<commit>`, `<cacheDir>/npm/<package>@<version>`), and an
 * existing folder there is used as is (another install of the same commit or version).
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { QuiverError } from '../../core/errors.ts';
import { cloneAtRef, redactUrlCredentials } from '../git.ts';
import { npmCacheFolderName, npmInstall } from '../npm.ts';
import { prepareSourceTree, SourceBuildError } from '../source-build.ts';
import type { InstallerSettings, InstallRequest } from './types.ts';
import { reuseFolder } from '../cache-folders.ts';
import type { FailStep, InstallStep } from './failure.ts';
import type { Staging } from './staging.ts';
import type { FetchedSource } from './types.ts';
import { fetchOpenApi } from './openapi.ts';
import { fetchContainer } from '../container/fetch.ts';
import { buildPythonCheckout, fetchPypi, fetchPythonFolder } from './fetch-python.ts';
import { hasOwnVenv } from '../python/folder-copy.ts';
import { detectPythonProject } from '../python/install.ts';

export type { FetchedSource } from './types.ts';

/** What every fetch function is handed. */
interface FetchInput {
  request: InstallRequest;
  settings: InstallerSettings;
  staging: Staging;
  fail: FailStep;
}

/** True when `path` is a folder (false when it is missing or not a folder). */
export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** A re-install without fetching: the installed cache folder and the recorded source, as they are. */
async function reuseInstalled({ request, fail }: FetchInput, root: string): Promise<FetchedSource> {
  if (!(await isDirectory(root))) throw fail('launch', `the plugin's folder ${root} is missing; run 'quiver plugin update ${request.name}' to fetch it again`);
  const sourceRecord = { ...(request.previousSource ?? {}) };
  return {
    root,
    finalPath: root,
    relativeFolder: typeof sourceRecord['packageFolder'] === 'string' ? sourceRecord['packageFolder'] : '.',
    // A Python folder's copy in the cache (folderHash) is not the user's folder.
    inPlace: request.source.kind === 'path' && sourceRecord['folderHash'] === undefined,
    sourceType: request.source.kind,
    sourceRecord,
    revision: typeof sourceRecord['commit'] === 'string' ? sourceRecord['commit'].slice(0, 12) : typeof sourceRecord['folderHash'] === 'string' ? sourceRecord['folderHash'].slice(0, 12) : undefined,
    packageVersion: typeof sourceRecord['version'] === 'string' ? sourceRecord['version'] : undefined,
    warnings: [],
  };
}

/** Installs a fresh checkout's dependencies and runs its build, before anything reads it (issue #15). */
async function buildCheckout({ request, settings, fail }: FetchInput, tree: string, relativeFolder: string): Promise<string[]> {
  try {
    const built = await prepareSourceTree(tree, relativeFolder, {
      label: request.name,
      trusted: request.trusted,
      installTimeoutMs: settings.npmTimeoutMs,
      buildTimeoutMs: settings.buildTimeoutMs,
      npmCacheDir: settings.npmCacheDir,
      commandEnv: settings.commandEnv,
      runSandboxed: settings.runSandboxed,
    });
    return built.warnings;
  } catch (error) {
    const step = error instanceof SourceBuildError ? ((error.details as { step?: InstallStep }).step ?? 'dependencies') : 'dependencies';
    if (error instanceof QuiverError) throw fail(step, error.message, { cause: error });
    throw error;
  }
}

/** A git repository cloned at its ref into staging, then built. */
async function fetchGit(input: FetchInput, url: string): Promise<FetchedSource> {
  const { request, settings, staging, fail } = input;
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(url)) {
    throw fail('clone', 'git URLs with an embedded password are refused (it would be stored in plain text); use an ssh URL or a git credential helper');
  }
  const tree = join(await staging.ensure('git'), 'tree');
  let checkout;
  try {
    checkout = await cloneAtRef(url, request.ref, tree, { timeoutMs: settings.gitTimeoutMs, env: settings.commandEnv });
  } catch (error) {
    const step = ((error as QuiverError).details as { step?: InstallStep } | undefined)?.step ?? 'clone';
    throw fail(step, (error as Error).message, { cause: error });
  }
  const finalPath = join(settings.cacheDir, 'git', checkout.commit);
  const root = (await reuseFolder(finalPath)) ? finalPath : tree;
  const relativeFolder = request.subfolder ?? '.';
  // A Python project gets a venv of its own (issue #26); any other tree its npm install and build.
  const python = await detectPythonProject(root, relativeFolder);
  const built = python !== undefined ? await buildPythonCheckout(input, root, relativeFolder, python, root === tree) : undefined;
  const warnings = built !== undefined ? built.warnings : root === tree ? await buildCheckout(input, tree, relativeFolder) : [];
  return {
    root,
    finalPath,
    relativeFolder,
    inPlace: false,
    sourceType: 'git',
    sourceRecord: {
      url: redactUrlCredentials(url),
      ref: request.ref ?? null,
      refKind: checkout.refKind,
      commit: checkout.commit,
      ...(relativeFolder !== '.' ? { packageFolder: relativeFolder } : {}),
      ...(built?.sourceExtras ?? {}),
    },
    revision: checkout.commit.slice(0, 12),
    packageVersion: built?.packageVersion,
    warnings,
  };
}

/** An npm package installed into staging. */
async function fetchNpm({ request, settings, staging, fail }: FetchInput, spec: string): Promise<FetchedSource> {
  const tree = join(await staging.ensure('npm'), 'tree');
  let installed;
  try {
    installed = await npmInstall(spec, tree, { trusted: request.trusted, timeoutMs: settings.npmTimeoutMs, cacheDir: settings.npmCacheDir, env: settings.commandEnv, runSandboxed: settings.runSandboxed });
  } catch (error) {
    throw fail('npm-install', (error as Error).message, { cause: error });
  }
  const finalPath = join(settings.cacheDir, 'npm', npmCacheFolderName(installed.packageName, installed.version));
  return {
    root: (await reuseFolder(finalPath)) ? finalPath : tree,
    finalPath,
    relativeFolder: installed.packageFolder,
    inPlace: false,
    sourceType: 'npm',
    sourceRecord: {
      spec,
      packageName: installed.packageName,
      version: installed.version,
      packageFolder: installed.packageFolder,
      trusted: request.trusted,
    },
    revision: undefined,
    packageVersion: installed.version,
    warnings: [],
  };
}

/**
 * A folder on this machine, used in place; a Python project without a venv of its own gets one
 * from Quiver in a copy keyed by the folder's content (issue #26, fetch-python.ts).
 */
async function fetchPath(input: FetchInput, path: string): Promise<FetchedSource> {
  const { fail } = input;
  if (!(await isDirectory(path))) throw fail('launch', `${path} is not a folder`);
  const python = await detectPythonProject(path, '.');
  if (python !== undefined && !(await hasOwnVenv(path))) return fetchPythonFolder(input, path, python);
  return { root: path, finalPath: path, relativeFolder: '.', inPlace: true, sourceType: 'path', sourceRecord: { path }, revision: undefined, packageVersion: undefined, warnings: [] };
}

/** A remote MCP server: nothing to fetch; credentials in the URL are refused, and so is a host at a refused address (SSRF guard). */
async function fetchUrl({ fail, settings }: FetchInput, text: string): Promise<FetchedSource> {
  const url = new URL(text);
  if (url.username !== '' || url.password !== '') {
    throw fail('launch', 'URLs with embedded credentials are refused (they would be stored in plain text); pass them with --header instead');
  }
  try {
    await settings.checkRemoteUrl?.(url);
  } catch (error) {
    throw fail('launch', (error as Error).message);
  }
  return { root: undefined, finalPath: undefined, relativeFolder: '.', inPlace: false, sourceType: 'url', sourceRecord: { url: text }, revision: undefined, packageVersion: undefined, warnings: [] };
}

/** Fetches the request's source (or reuses the installed folder) and records the launch options of a new fetch. */
export async function fetchSource(input: FetchInput): Promise<FetchedSource> {
  const { request } = input;
  const { source } = request;
  const reuse = request.reuseCachePath !== undefined && source.kind !== 'url';
  const fetched = reuse
    ? await reuseInstalled(input, request.reuseCachePath!)
    : source.kind === 'git'
      ? await fetchGit(input, source.url)
      : source.kind === 'npm'
        ? await fetchNpm(input, source.spec)
        : source.kind === 'pypi'
          ? await fetchPypi(input, source)
        : source.kind === 'path'
          ? await fetchPath(input, source.path)
          : source.kind === 'openapi'
            ? await fetchOpenApi(input, source)
            : source.kind === 'container'
              ? await fetchContainer(input, source.image)
              : await fetchUrl(input, source.url);
  if (request.reuseCachePath === undefined) {
    // A re-install keeps the recorded source as it is; a new fetch records what it was asked for.
    fetched.sourceRecord = { ...fetched.sourceRecord, ...(request.sourceExtras ?? {}) };
    if (request.args.length > 0) fetched.sourceRecord['args'] = [...request.args];
    if (request.bin !== undefined) fetched.sourceRecord['bin'] = request.bin;
  }
  return fetched;
}
