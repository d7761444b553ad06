/**
 * @module plugins/npm
 * Installing a plugin published on npm into a folder of its own (DESIGN §3.5): a private
 * prefix with `npm install <spec> --ignore-scripts` (an install must not run code from the
 * registry on the host), no audit, no funding notices. The npm CLI runs through execFile (no
 * shell) with a timeout. When the admin trusts the package, its lifecycle scripts (install,
 * postinstall, native builds) then run with `npm rebuild` in the plugin sandbox: no network,
 * dropped privileges, only the install folder writable (issue #23: trust in a package is not
 * a licence to run its code as the hub's user); without a sandbox a trusted install is refused.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { z } from 'zod';
import { QuiverError } from '../core/errors.ts';
import { parseSourceJson, readSourceFile, SourceFileError } from './source-files.ts';
import { MINIMAL_COMMAND_ENV } from './command-env.ts';
import { npmFailureReason } from './npm-failure.ts';
import type { OneShotRequest, OneShotResult } from '../runtime/one-shot.ts';

/** Options of `npmInstall`. */
export interface NpmInstallOptions {
  /** Run lifecycle scripts (install, postinstall…): only for packages the admin trusts. */
  trusted: boolean;
  timeoutMs: number;
  /** npm's cache folder (shared between installs); default: npm's own. */
  cacheDir?: string | undefined;
  /** Environment for npm (PATH, HOME, registry settings). Default: the hub's, inherited. */
  env?: Record<string, string | undefined> | undefined;
  /** Runs a command in the plugin sandbox: where a trusted package's lifecycle scripts run. */
  runSandboxed?: ((request: OneShotRequest) => Promise<OneShotResult>) | undefined;
}

/** What was installed. */
export interface NpmInstallResult {
  /** The package name as installed (`@scope/name`). */
  packageName: string;
  version: string;
  /** The package folder, relative to the install folder (`node_modules/@scope/name`). */
  packageFolder: string;
}

/** The npm step failed. */
export class NpmInstallError extends QuiverError {
  constructor(reason: string, cause?: unknown) {
    super('npm_failed', reason, { kind: 'user', details: { step: 'npm-install', reason }, cause });
  }
}

const prefixManifestSchema = z.object({ dependencies: z.record(z.string(), z.string()).optional() });
const installedManifestSchema = z.object({ name: z.string().min(1), version: z.string().min(1) });

function runNpm(args: string[], options: NpmInstallOptions): Promise<void> {
  const env: Record<string, string | undefined> = {
    ...(options.env ?? MINIMAL_COMMAND_ENV),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_yes: 'true',
  };
  if (options.cacheDir !== undefined) env.npm_config_cache = options.cacheDir;
  return new Promise((resolvePromise, reject) => {
    execFile('npm', args, { env, timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 32 * 1024 * 1024, windowsHide: true }, (error, _stdout, stderr) => {
      if (!error) {
        resolvePromise();
        return;
      }
      const killed = (error as { killed?: boolean }).killed === true;
      const detail = npmFailureReason(String(stderr || error.message));
      // The installer names the step ("npm install failed: …"): the reason is npm's own words.
      reject(new NpmInstallError(killed ? `timed out after ${options.timeoutMs} ms` : detail, error));
    });
  });
}

/** Runs the installed tree's lifecycle scripts (`npm rebuild`) in the sandbox, no network, `folder` writable. */
async function runScriptsSandboxed(spec: string, folder: string, options: NpmInstallOptions): Promise<void> {
  const result = await options.runSandboxed!({
    label: `${spec} install scripts`,
    command: 'npm',
    args: ['rebuild', '--foreground-scripts', '--loglevel=error'],
    workDir: folder,
    env: { npm_config_update_notifier: 'false', npm_config_cache: '/tmp/npm-cache', npm_config_logs_max: '0', npm_config_offline: 'true' },
    timeoutMs: options.timeoutMs,
  });
  if (result.timedOut) throw new NpmInstallError(`install scripts timed out after ${options.timeoutMs} ms (in the sandbox, no network)`);
  if (result.exitCode !== 0) {
    const tail = result.outputTail.split('\n').filter((line) => line.trim() !== '').slice(-12).join('\n');
    throw new NpmInstallError(`install scripts exited with ${result.exitCode ?? result.signal} (in the sandbox, no network): ${tail}`);
  }
}

/** Installs `spec` into `folder` (created if missing) and reports the package it resolved to. */
export async function npmInstall(spec: string, folder: string, options: NpmInstallOptions): Promise<NpmInstallResult> {
  if (spec.startsWith('-')) throw new NpmInstallError(`invalid npm package spec '${spec}'`);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'package.json'), `${JSON.stringify({ name: 'quiver-plugin-install', private: true }, null, 2)}\n`);
  // Fail before fetching anything: trusted scripts need the sandbox to run in.
  if (options.trusted && options.runSandboxed === undefined) {
    throw new NpmInstallError("--trusted runs the package's install scripts in the plugin sandbox, and there is none here (install bubblewrap); install without --trusted");
  }
  await runNpm(['install', '--prefix', folder, '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error', '--save', '--ignore-scripts', '--', spec], options);
  if (options.trusted) await runScriptsSandboxed(spec, folder, options);

  // The spec may be a range, a tag, an alias or a tarball: the prefix's package.json says what it became.
  // Both files are read without following links out of the install folder (issue #18 finding 4).
  const prefixText = await readSourceFile(folder, 'package.json').catch((error: unknown) => {
    throw new NpmInstallError(`cannot read the install folder's package.json: ${(error as Error).message}`, error);
  });
  const prefixJson = prefixText === undefined ? undefined : parseSourceJson(prefixText, 'package.json');
  const prefix = prefixManifestSchema.safeParse(prefixJson !== undefined && 'value' in prefixJson ? prefixJson.value : undefined);
  const names = prefix.success ? Object.keys(prefix.data.dependencies ?? {}) : [];
  if (names.length !== 1) throw new NpmInstallError(`'${spec}' did not record exactly one dependency (found ${names.length})`);
  const dependency = names[0]!;
  const packageFolder = join('node_modules', dependency);
  let installed: z.output<typeof installedManifestSchema>;
  try {
    const text = await readSourceFile(folder, posix.join('node_modules', dependency, 'package.json'));
    const json = text === undefined ? undefined : parseSourceJson(text, 'package.json');
    installed = installedManifestSchema.parse(json !== undefined && 'value' in json ? json.value : undefined);
  } catch (error) {
    if (error instanceof SourceFileError) {
      throw new NpmInstallError(
        `the installed package '${dependency}' is not a plain folder of the install (${error.message}); install a local folder as a path source instead`,
        error,
      );
    }
    throw new NpmInstallError(`the installed package '${dependency}' has no readable package.json with name and version`, error);
  }
  return { packageName: dependency, version: installed.version, packageFolder };
}

/** The cache folder name of an npm package version: `@scope/name@1.2.3` → `@scope+name@1.2.3` (one level). */
export function npmCacheFolderName(packageName: string, version: string): string {
  return `${packageName.replace('/', '+')}@${version}`.replace(/[^A-Za-z0-9@+._-]/g, '_');
}
