/**
 * @module plugins/source-build
 * Git-hosted servers as people publish them (issue #15): a TypeScript MCP server on GitHub has a
 * `package.json` with `@modelcontextprotocol/sdk` and zod as dependencies, a lockfile, and a
 * `build` script that writes the entry point (`dist/index.js`), which is not committed. After the
 * clone, and before anything reads the tree, this step
 * 1. (Python projects get a venv instead, before this step: python/install.ts, issue #26);
 * 2. installs the dependencies from the lockfile the repository has — npm (`package-lock.json`,
 *    `npm ci`), pnpm (`pnpm-lock.yaml`) or yarn classic (`yarn.lock`), with pnpm and yarn run
 *    from the npm registry through `npm exec` — inside the sandbox with the tree writable and
 *    the network limited to the registry (runtime/egress-proxy.ts), lifecycle scripts off
 *    unless the admin trusts the plugin (the lockfile's integrity hashes pin what is fetched),
 *    and the repository's own `.npmrc` set aside so it cannot redirect the registry; in a
 *    monorepo the install runs at the repository root (workspaces) and the plugin is the
 *    sub-folder given with `--path`;
 * 3. runs the package's `build` script when a declared entry point is missing — in the
 *    UNVERIFIED sandbox with no network (runtime/one-shot.ts), since it is the repository's code.
 * The result is cached by commit with the rest of the tree.
 */
import { rename, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { execFile } from 'node:child_process';
import { z } from 'zod';
import { QuiverError } from '../core/errors.ts';
import type { OneShotRequest, OneShotResult } from '../runtime/one-shot.ts';
import { parseSourceJson, readSourceFile, resolveInsideRoot } from './source-files.ts';
import { MINIMAL_COMMAND_ENV } from './command-env.ts';

/** Which package manager a tree uses, from its lockfile. */
export type PackageManager = 'npm' | 'pnpm' | 'yarn';

/** What the step did. */
export interface SourceBuildReport {
  packageManager: PackageManager | undefined;
  /** Dependencies were installed. */
  installed: boolean;
  /** The build script ran. */
  built: boolean;
  warnings: string[];
}

/** Settings of `prepareSourceTree`. */
export interface SourceBuildSettings {
  /** Run install scripts (only for plugins the admin trusts). */
  trusted: boolean;
  installTimeoutMs: number;
  buildTimeoutMs: number;
  npmCacheDir?: string | undefined;
  /** Environment of the package manager (PATH, HOME, registry settings). Default: inherited. */
  commandEnv?: Record<string, string | undefined> | undefined;
  /**
   * Runs the install (network: the registry only) and the build (no network) in the sandbox.
   * Without it the install runs on the host (scripts off) and a tree that needs a build is refused.
   */
  runSandboxed?: ((request: OneShotRequest) => Promise<OneShotResult>) | undefined;
  /** The npm registry the install may reach (default https://registry.npmjs.org/). */
  registryUrl?: string | undefined;
  /** Names the plugin in messages. */
  label: string;
}

/** The step failed; `step` says which (`dependencies` or `build`). */
export class SourceBuildError extends QuiverError {
  constructor(step: 'dependencies' | 'build', reason: string, cause?: unknown) {
    super('install_failed', reason, { kind: 'user', details: { step, reason }, cause });
  }
}

const packageSchema = z.looseObject({
  main: z.string().optional(),
  bin: z.union([z.string(), z.record(z.string(), z.string())]).optional(),
  scripts: z.record(z.string(), z.string()).optional(),
  dependencies: z.record(z.string(), z.string()).optional(),
  devDependencies: z.record(z.string(), z.string()).optional(),
  workspaces: z.unknown().optional(),
  packageManager: z.string().optional(),
});
type PackageFile = z.output<typeof packageSchema>;

async function readPackage(root: string, relativeFolder: string): Promise<PackageFile | undefined> {
  const file = posix.join(relativeFolder, 'package.json');
  const text = await readSourceFile(root, file);
  if (text === undefined) return undefined;
  const parsed = parseSourceJson(text, file);
  if ('error' in parsed) throw new SourceBuildError('dependencies', parsed.error);
  const result = packageSchema.safeParse(parsed.value);
  if (!result.success) throw new SourceBuildError('dependencies', `${file} has an unexpected shape`);
  return result.data;
}

async function exists(root: string, relativePath: string): Promise<boolean> {
  const path = await resolveInsideRoot(root, relativePath).catch(() => undefined);
  if (path === undefined) return false;
  return stat(path).then(() => true, () => false);
}

/** The lockfile's package manager at `relativeFolder` (or undefined when there is no lockfile). */
export async function detectPackageManager(root: string, relativeFolder: string): Promise<PackageManager | undefined> {
  if ((await exists(root, posix.join(relativeFolder, 'pnpm-lock.yaml')))) return 'pnpm';
  if ((await exists(root, posix.join(relativeFolder, 'yarn.lock')))) return 'yarn';
  if ((await exists(root, posix.join(relativeFolder, 'package-lock.json'))) || (await exists(root, posix.join(relativeFolder, 'npm-shrinkwrap.json')))) return 'npm';
  return undefined;
}

/** Entry points the package declares (`bin` values, `main`), relative to its folder. */
function declaredEntries(pkg: PackageFile): string[] {
  const entries: string[] = [];
  if (typeof pkg.bin === 'string') entries.push(pkg.bin);
  else if (pkg.bin) entries.push(...Object.values(pkg.bin));
  if (pkg.main) entries.push(pkg.main);
  return entries.map((entry) => posix.normalize(entry.replace(/^\.\//, '')));
}

function hasDependencies(pkg: PackageFile | undefined): boolean {
  return Object.keys(pkg?.dependencies ?? {}).length > 0 || Object.keys(pkg?.devDependencies ?? {}).length > 0;
}

/** The major version of pnpm that reads this lockfile (`lockfileVersion: '9.0'` → 9). */
async function pnpmMajor(root: string, relativeFolder: string): Promise<number> {
  const text = (await readSourceFile(root, posix.join(relativeFolder, 'pnpm-lock.yaml'), { maxBytes: 64 * 1024 * 1024 })) ?? '';
  const version = /lockfileVersion:\s*'?(\d+)/.exec(text)?.[1];
  if (version === '9') return 9;
  if (version === '6') return 8;
  return 9;
}

function tail(text: string, lines = 12): string {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^npm (warn|notice)/i.test(line))
    .slice(-lines)
    .join('\n')
    .replace(/(\/\/[^/\s:]+:)[^@\s]+@/g, '$1***@');
}

function run(command: string, args: string[], cwd: string, settings: SourceBuildSettings, what: string): Promise<void> {
  const env: Record<string, string | undefined> = {
    ...(settings.commandEnv ?? MINIMAL_COMMAND_ENV),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_yes: 'true',
    CI: 'true',
  };
  if (settings.npmCacheDir !== undefined) env.npm_config_cache = settings.npmCacheDir;
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, timeout: settings.installTimeoutMs, killSignal: 'SIGKILL', maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve();
      const killed = (error as { killed?: boolean }).killed === true;
      reject(
        new SourceBuildError(
          'dependencies',
          killed ? `${what} timed out after ${settings.installTimeoutMs} ms` : `${what} failed: ${tail(String(stderr || stdout || error.message))}`,
          error,
        ),
      );
    });
  });
}

/** The host's CA settings for TLS through an intercepting proxy, when they point where the sandbox can read (/etc/ssl, /usr). */
function trustedCaEnv(env: Record<string, string | undefined>): Record<string, string> {
  const visible = (path: string | undefined) => path !== undefined && /^\/(etc\/ssl|etc\/pki|usr)\//.test(path) && !path.includes('..');
  const picked: Record<string, string> = {};
  for (const name of ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR']) if (visible(env[name])) picked[name] = env[name]!;
  return picked;
}

/**
 * The install inside the sandbox: the tree writable, no network but the registry through the
 * egress proxy, npm's and pnpm's and yarn's caches and logs in the sandbox's private /tmp, and no
 * user or global npm configuration.
 */
async function runSandboxedInstall(command: string, args: string[], installPath: string, settings: SourceBuildSettings, what: string): Promise<void> {
  const registry = new URL(settings.registryUrl ?? 'https://registry.npmjs.org/');
  const result = await settings.runSandboxed!({
    label: `${settings.label} install`,
    command,
    args,
    workDir: installPath,
    env: {
      npm_config_registry: registry.toString(),
      npm_config_cache: '/tmp/npm-cache',
      // The repository must not configure npm (its .npmrc would be the user config here, as the
      // tree is $HOME); the host's global npmrc under /usr (CA file, registry) still applies.
      npm_config_userconfig: '/tmp/no-user-npmrc',
      ...trustedCaEnv(settings.commandEnv ?? MINIMAL_COMMAND_ENV),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      npm_config_logs_max: '0',
      npm_config_store_dir: '/tmp/pnpm-store',
      YARN_CACHE_FOLDER: '/tmp/yarn-cache',
      CI: 'true',
    },
    timeoutMs: settings.installTimeoutMs,
    egress: [{ host: registry.hostname, port: registry.port === '' ? (registry.protocol === 'http:' ? 80 : 443) : Number(registry.port) }],
  });
  if (result.timedOut) throw new SourceBuildError('dependencies', `${what} timed out after ${settings.installTimeoutMs} ms`);
  if (result.exitCode !== 0) {
    throw new SourceBuildError('dependencies', `${what} exited with ${result.exitCode ?? result.signal} (network limited to ${registry.host}): ${tail(result.outputTail)}`);
  }
}

/** The install command of a package manager, scripts off unless trusted. */
function installCommand(manager: PackageManager | undefined, pnpmVersion: number, trusted: boolean): { command: string; args: string[]; what: string } {
  const scripts = trusted ? [] : ['--ignore-scripts'];
  switch (manager) {
    case 'pnpm':
      return { command: 'npm', args: ['exec', '--yes', `--package=pnpm@${pnpmVersion}`, '--', 'pnpm', 'install', '--frozen-lockfile', ...scripts], what: `pnpm ${pnpmVersion} install` };
    case 'yarn':
      return { command: 'npm', args: ['exec', '--yes', '--package=yarn@1', '--', 'yarn', 'install', '--frozen-lockfile', '--non-interactive', ...scripts], what: 'yarn install' };
    case 'npm':
      return { command: 'npm', args: ['ci', '--no-audit', '--no-fund', '--loglevel=error', ...scripts], what: 'npm ci' };
    default:
      return { command: 'npm', args: ['install', '--no-audit', '--no-fund', '--loglevel=error', '--no-package-lock', ...scripts], what: 'npm install' };
  }
}

/**
 * Prepares a freshly cloned tree so its server can start: dependencies
 * installed from the lockfile, the build run when an entry point is missing.
 */
export async function prepareSourceTree(root: string, relativeFolder: string, settings: SourceBuildSettings): Promise<SourceBuildReport> {
  const report: SourceBuildReport = { packageManager: undefined, installed: false, built: false, warnings: [] };
  const pkg = await readPackage(root, relativeFolder);
  // A tree without package.json has nothing to install here (Python projects: python/install.ts).
  if (pkg === undefined) {
    return report;
  }

  // In a monorepo the lockfile (and the workspace) is at the root; the plugin is a sub-folder.
  const atRoot = relativeFolder !== '.' && (await readPackage(root, '.').catch(() => undefined)) !== undefined;
  const installFolder = atRoot && (await detectPackageManager(root, '.')) !== undefined ? '.' : relativeFolder;
  const manager = await detectPackageManager(root, installFolder);
  report.packageManager = manager;
  const installPackage = installFolder === relativeFolder ? pkg : await readPackage(root, installFolder);
  const needsInstall = hasDependencies(installPackage) || hasDependencies(pkg);
  const installPath = (await resolveInsideRoot(root, installFolder))!;

  if (needsInstall && !(await exists(root, posix.join(installFolder, 'node_modules')))) {
    if (manager === undefined) report.warnings.push('no lockfile: dependencies were resolved by npm now, not pinned by the repository');
    // The repository's .npmrc could point the registry elsewhere or carry other settings: not ours to follow.
    const npmrc = join(installPath, '.npmrc');
    const hasNpmrc = await stat(npmrc).then((s) => s.isFile(), () => false);
    if (hasNpmrc) {
      await rename(npmrc, `${npmrc}.ignored-by-quiver`);
      report.warnings.push("the repository's .npmrc was ignored during the install");
    }
    const { command, args, what } = installCommand(manager, manager === 'pnpm' ? await pnpmMajor(root, installFolder) : 0, settings.trusted);
    if (settings.runSandboxed) await runSandboxedInstall(command, args, installPath, settings, what);
    else await run(command, args, installPath, settings, what);
    report.installed = true;
  }

  const entries = declaredEntries(pkg);
  const missing: string[] = [];
  for (const entry of entries) if (!(await exists(root, posix.join(relativeFolder, entry)))) missing.push(entry);
  if (missing.length > 0) {
    if (pkg.scripts?.build === undefined) {
      throw new SourceBuildError('build', `the entry point ${missing.join(', ')} is missing and package.json has no "build" script to produce it`);
    }
    if (settings.runSandboxed === undefined) throw new SourceBuildError('build', 'the entry point must be built, but no sandbox is available to run the build in');
    const packagePath = (await resolveInsideRoot(root, relativeFolder))!;
    const result = await settings.runSandboxed({
      label: `${settings.label} build`,
      command: 'npm',
      args: ['run', 'build', '--loglevel=error'],
      // The whole install folder is writable (a monorepo build may write beside the package);
      // the script runs in the package's folder, where npm finds every node_modules/.bin above it.
      workDir: installPath,
      cwd: packagePath,
      env: { npm_config_update_notifier: 'false', npm_config_cache: '/tmp/npm-cache', npm_config_logs_max: '0' },
      timeoutMs: settings.buildTimeoutMs,
    });
    if (result.timedOut) throw new SourceBuildError('build', `npm run build timed out after ${settings.buildTimeoutMs} ms (no network in the build sandbox)`);
    if (result.exitCode !== 0) {
      throw new SourceBuildError('build', `npm run build exited with ${result.exitCode ?? result.signal} (no network in the build sandbox): ${tail(result.outputTail)}`);
    }
    report.built = true;
    const stillMissing: string[] = [];
    for (const entry of missing) if (!(await exists(root, posix.join(relativeFolder, entry)))) stillMissing.push(entry);
    if (stillMissing.length > 0) throw new SourceBuildError('build', `the build finished but ${stillMissing.join(', ')} is still missing`);
  }
  return report;
}
