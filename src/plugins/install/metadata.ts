/**
 * @module plugins/install/metadata
 * Steps 2 and 3 of an install: read the plugin's quiver.json and package.json from the fetched
 * tree (never through a link out of it; errors never quote the file), check quiver.json's shape
 * before anything is started, and work out how the plugin is launched. The full validation,
 * which needs the tools the server really registers, comes after discovery (catalog-entry.ts).
 */
import { posix } from 'node:path';
import { launchSpecSchema, validatePluginMetadata, type LaunchSpec } from '../../core/plugin-metadata.ts';
import { readPackageJson, resolveLaunch, LaunchResolutionError, type PackageJson, type StoredLaunch } from '../launch.ts';
import type { InstallRequest } from './types.ts';
import { parseSourceJson, readSourceFile, SOURCE_FILE_LIMIT, SourceFileError } from '../source-files.ts';
import type { FailStep } from './failure.ts';
import type { FetchedSource } from './types.ts';
import { openApiLaunch } from './openapi.ts';
import { containerLaunch } from '../container/fetch.ts';
import { viaVenv } from '../python/entry-point.ts';
import { detectPythonProject } from '../python/install.ts';

/** What the plugin's files say about it. */
export interface PluginFiles {
  /** quiver.json as parsed JSON (not yet validated); undefined when there is none. */
  rawMetadata: unknown;
  /** quiver.json when it is a JSON object. */
  fileObject: Record<string, unknown> | undefined;
  /** quiver.json's `launch`, when it parses. */
  launch: LaunchSpec | undefined;
  packageJson: PackageJson | undefined;
}

/** Reads `<relativeFolder>/quiver.json` under `root` (never through a link out of it; errors never quote it). */
async function readQuiverJson(root: string, relativeFolder: string): Promise<{ raw: unknown; present: boolean; error?: string }> {
  let text: string | undefined;
  try {
    text = await readSourceFile(root, posix.join(relativeFolder, 'quiver.json'), { maxBytes: SOURCE_FILE_LIMIT });
  } catch (error) {
    if (error instanceof SourceFileError) return { raw: undefined, present: true, error: error.message };
    throw error;
  }
  if (text === undefined) return { raw: undefined, present: false };
  const parsed = parseSourceJson(text, 'quiver.json');
  return 'value' in parsed ? { raw: parsed.value, present: true } : { raw: undefined, present: true, error: parsed.error };
}

/** Reads quiver.json and package.json; fails at `validation` when quiver.json is broken so badly the server cannot start. */
export async function readPluginFiles(fetched: FetchedSource, name: string, fail: FailStep): Promise<PluginFiles> {
  const { root, relativeFolder } = fetched;
  let rawMetadata: unknown;
  let packageJson: PackageJson | undefined;
  if (root !== undefined) {
    const file = await readQuiverJson(root, relativeFolder);
    if (file.error !== undefined) throw fail('validation', file.error, { errors: [file.error] });
    rawMetadata = file.present ? file.raw : undefined;
    try {
      packageJson = await readPackageJson(root, relativeFolder);
    } catch (error) {
      if (error instanceof SourceFileError) throw fail('validation', error.message, { errors: [error.message] });
      throw error;
    }
  }
  const precheck = rawMetadata === undefined ? undefined : validatePluginMetadata(rawMetadata, { pluginName: name });
  const fileObject =
    rawMetadata !== null && typeof rawMetadata === 'object' && !Array.isArray(rawMetadata) ? (rawMetadata as Record<string, unknown>) : undefined;
  const parsedLaunch = fileObject?.['launch'] === undefined ? undefined : launchSpecSchema.safeParse(fileObject['launch']);
  if (precheck !== undefined && !precheck.valid && (fileObject === undefined || parsedLaunch?.success === false)) {
    // The file or its launch is broken, so the server cannot be started: report what is known now.
    // Otherwise discovery still runs, so the final report also covers the examples' tools.
    throw fail('validation', `quiver.json has ${precheck.errors.length} error(s): ${precheck.errors.join(' ')}`, {
      errors: precheck.errors,
      warnings: precheck.warnings,
    });
  }
  return { rawMetadata, fileObject, launch: parsedLaunch?.success === true ? parsedLaunch.data : undefined, packageJson };
}

/** How the plugin is launched: its URL (remote), or the command quiver.json, package.json or the bin entry give. */
export async function resolvePluginLaunch(request: InstallRequest, fetched: FetchedSource, files: PluginFiles, fail: FailStep): Promise<StoredLaunch> {
  if (request.source.kind === 'url') return { transport: 'http', url: request.source.url };
  if (request.source.kind === 'openapi') return openApiLaunch(fetched);
  if (request.source.kind === 'container') return containerLaunch(request, fetched);
  const { sourceRecord } = fetched;
  try {
    return await resolveLaunch({
      root: fetched.root!,
      relativeFolder: fetched.relativeFolder,
      launch: pythonAware(files.launch, sourceRecord),
      packageJson: files.packageJson,
      binName: request.bin ?? (typeof sourceRecord['bin'] === 'string' ? sourceRecord['bin'] : undefined),
      extraArgs: request.reuseCachePath === undefined ? request.args : Array.isArray(sourceRecord['args']) ? (sourceRecord['args'] as string[]) : [],
    });
  } catch (error) {
    if (error instanceof LaunchResolutionError) {
      const hint = fetched.sourceType === 'path' && files.launch === undefined && (await detectPythonProject(fetched.root!, fetched.relativeFolder)) !== undefined
        ? ". This folder is a Python project: give it a quiver.json \"launch\" with your environment's interpreter (e.g. {\"command\": \"./.venv/bin/python\", \"args\": [\"-m\", \"your_server\"]}), or install it as a pinned copy with its own environment: 'quiver plugin add file://FOLDER' on a git repository"
        : '';
      throw fail('launch', `${error.message}${hint}`);
    }
    throw error;
  }
}

/**
 * A Python plugin's launch (issue #26): quiver.json's, with `python`/`python3` meaning the
 * plugin's own venv, else the entry point recorded from its package metadata.
 */
function pythonAware(launch: LaunchSpec | undefined, sourceRecord: Record<string, unknown>): LaunchSpec | undefined {
  const recorded = sourceRecord['pythonLaunch'] as { command?: unknown; args?: unknown } | undefined;
  const hasVenv = typeof sourceRecord['python'] === 'string';
  if (launch !== undefined) {
    const venvCommand = hasVenv && launch.transport === 'stdio' && launch.command !== undefined ? viaVenv(launch.command) : undefined;
    return venvCommand === undefined ? launch : { ...launch, command: venvCommand };
  }
  if (recorded !== undefined && typeof recorded.command === 'string' && Array.isArray(recorded.args) && recorded.args.every((arg) => typeof arg === 'string')) {
    return { transport: 'stdio', command: recorded.command, args: recorded.args as string[] };
  }
  return undefined;
}

/** The plugin's version: quiver.json's, else package.json's or the npm version, plus the git commit; `remote` or `local` when none. */
export function pluginVersion(request: InstallRequest, fetched: FetchedSource, files: PluginFiles): string {
  const declaredVersion = typeof files.fileObject?.['version'] === 'string' ? files.fileObject['version'] : undefined;
  return (
    [declaredVersion ?? files.packageJson?.version ?? fetched.packageVersion, fetched.revision]
      .filter((part): part is string => part !== undefined && part !== '')
      .join('+') || (request.source.kind === 'url' ? 'remote' : 'local')
  );
}
