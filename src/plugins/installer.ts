/**
 * @module plugins/installer
 * The filesystem and discovery half of an install (seed 003 "Plugin Registration & Caching",
 * DESIGN §3.5): fetch the source into a staging folder, read quiver.json / package.json,
 * work out the launch, start the server once in the sandbox to list its tools, resources
 * and prompts, validate the metadata against what the server really registers, and build
 * the catalog tool inputs. Nothing here touches the database; the service commits the result.
 *
 * Every failure becomes `install_failed` with `details.step` naming the step that failed
 * (`clone`, `checkout`, `npm-install`, `launch`, `discovery`, `validation`, `sync`) and the
 * staging folder is removed, so a failed install leaves nothing behind.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, isAbsolute, join, posix, resolve } from 'node:path';
import { QuiverError } from '../core/errors.ts';
import { z } from 'zod';
import {
  buildCatalogTools,
  credentialSpecSchema,
  launchSpecSchema,
  validatePluginMetadata,
  type CredentialSpec,
  type DiscoveredTool,
  type PluginMetadata,
} from '../core/plugin-metadata.ts';
import type { ToolInput } from '../core/tool.ts';
import type { Supervisor } from '../runtime/supervisor.ts';
import { createRedactor, type Redactor } from '../runtime/redact.ts';
import type { TrustLevel, UpstreamSpecInput } from '../runtime/types.ts';
import type { PluginInstallFields } from '../store/repositories/plugins.ts';
import { processOwner } from '../store/process-owner.ts';
import { cloneAtRef, redactUrlCredentials } from './git.ts';
import { readPackageJson, resolveLaunch, LaunchResolutionError, type PackageJson, type StoredLaunch } from './launch.ts';
import { npmCacheFolderName, npmInstall } from './npm.ts';
import type { PluginSource } from './sources.ts';
import { parseSourceJson, readSourceFile, SOURCE_FILE_LIMIT, SourceFileError } from './source-files.ts';
import { prepareSourceTree, SourceBuildError, type SourceBuildSettings } from './source-build.ts';

/** The file in each staging folder naming the process it belongs to. */
export const STAGING_OWNER_FILE = 'owner.json';

/** The steps an install goes through, as reported in `install_failed` details. */
export type InstallStep = 'clone' | 'checkout' | 'dependencies' | 'build' | 'npm-install' | 'launch' | 'discovery' | 'validation' | 'sync';

/** How a step reads in a message when its id is not plain words. */
const STEP_LABELS: Partial<Record<InstallStep, string>> = { 'npm-install': 'npm install' };

/** The error every failed install throws; the message names the step once ("clone failed: …"). */
export function installFailed(
  pluginName: string,
  step: InstallStep,
  reason: string,
  extra: { errors?: string[]; warnings?: string[]; cause?: unknown } = {},
): QuiverError {
  const details: Record<string, unknown> = { step, reason, plugin: pluginName };
  if (extra.errors !== undefined) details['errors'] = extra.errors;
  if (extra.warnings !== undefined) details['warnings'] = extra.warnings;
  return new QuiverError('install_failed', `cannot install plugin '${pluginName}': ${STEP_LABELS[step] ?? step} failed: ${reason}`, {
    kind: 'user',
    details,
    cause: extra.cause,
  });
}

/** The part of the supervisor the installer uses. */
export type PluginDiscoverer = Pick<Supervisor, 'discover'>;

/** Settings shared by every install. */
export interface InstallerSettings {
  cacheDir: string;
  discoverer: PluginDiscoverer;
  discoveryTimeoutMs: number;
  gitTimeoutMs: number;
  npmTimeoutMs: number;
  npmCacheDir?: string | undefined;
  /** Bound on a git source's build step in the sandbox, ms. */
  buildTimeoutMs: number;
  /** Runs a git source's build in the UNVERIFIED sandbox (runtime/one-shot.ts); absent: builds are refused. */
  runSandboxed?: SourceBuildSettings['runSandboxed'];
  commandEnv?: Record<string, string | undefined> | undefined;
  /** Host paths every local plugin may read (bound read-only into its sandbox). */
  readOnlyPaths: readonly string[];
  trustLevel: TrustLevel;
}

/** One install (or re-install) request, with the source already resolved. */
export interface InstallRequest {
  source: Exclude<PluginSource, { kind: 'market' }>;
  /** The plugin name it will be installed under. */
  name: string;
  /** Plugin id for an update (discovery runs under it); absent for a new plugin. */
  pluginId?: string | undefined;
  ref?: string | undefined;
  /** A git source's plugin folder inside the repository (monorepos), e.g. `packages/server`. */
  subfolder?: string | undefined;
  args: readonly string[];
  bin?: string | undefined;
  trusted: boolean;
  /** Credential values available now (given with the request, or already stored). */
  secretValues: Record<string, string>;
  /** Credentials declared outside quiver.json (headers, marketplace environment variables). */
  extraCredentials: readonly CredentialSpec[];
  /** Extra source details to record (e.g. the marketplace entry it came from). */
  sourceExtras?: Record<string, unknown> | undefined;
  /** Re-discover an installed plugin from its cache folder instead of fetching again. */
  reuseCachePath?: string | undefined;
  /** The previous source record, when reusing (kept as is). */
  previousSource?: Record<string, unknown> | undefined;
}

/** A prepared install: everything to commit, plus the staged folder to move into place. */
export interface PreparedInstall {
  fields: PluginInstallFields;
  tools: ToolInput[];
  categories: Array<{ name: string; displayName?: string | undefined; description?: string | undefined; parent?: string | undefined }>;
  pageMappings: Array<{ pagePattern: string; category: string; priority: number }>;
  /** The PID shipped in quiver.json, if any (validated as part of the metadata). */
  shippedPid: Record<string, unknown> | undefined;
  registeredTools: string[];
  warnings: string[];
  /** The folder the plugin will live in once committed (absent for remote plugins). */
  cachePath: string | undefined;
  /** True when the cache folder is the user's own folder (path sources): never deleted. */
  inPlace: boolean;
  /** Moves the staged folder into place; resolves to true when this install created the cache folder. */
  place(): Promise<boolean>;
  /** Removes the staging folder (idempotent). */
  discard(): Promise<void>;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** A stdio command relative to the plugin (`./server`) is made absolute against its working folder. */
function absoluteCommand(command: string, cwd: string): string {
  return command.startsWith('./') || command.startsWith('../') ? resolve(cwd, command) : command;
}

/**
 * When Quiver runs as root, a sandboxed plugin is started as an unprivileged user (runtime
 * sandbox.ts), which must be able to reach the plugin's folder: every folder above it needs
 * the execute bit for others. Returns the first folder that blocks it, if any.
 */
export async function folderBlockingSandbox(path: string): Promise<string | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  let current = resolve(path);
  for (;;) {
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
    if (((await stat(current)).mode & 0o001) === 0) return current;
  }
}

/** Builds the runtime spec of an installed or staged plugin. */
export function buildUpstreamSpec(input: {
  pluginId: string;
  pluginName: string;
  version: string;
  launch: StoredLaunch;
  root: string | undefined;
  env: Record<string, string>;
  headers: Record<string, string>;
  readOnlyPaths: readonly string[];
  trustLevel: TrustLevel;
  /** Writable folder of the plugin (default: the supervisor's `<stateRoot>/<pluginId>`). */
  stateDir?: string | undefined;
}): UpstreamSpecInput {
  const base = { pluginId: input.pluginId, pluginName: input.pluginName, version: input.version, trustLevel: input.trustLevel };
  if (input.launch.transport === 'http') return { ...base, transport: 'http', url: input.launch.url, headers: input.headers };
  if (input.root === undefined) throw new QuiverError('internal', `plugin '${input.pluginName}' has a local launch but no folder`);
  const cwd = isAbsolute(input.launch.cwd) ? input.launch.cwd : join(input.root, input.launch.cwd);
  return {
    ...base,
    transport: 'stdio',
    command: absoluteCommand(input.launch.command, cwd),
    args: input.launch.args,
    env: input.env,
    cwd,
    // The whole cache folder, not only cwd: an npm package's dependencies sit beside it.
    readOnlyPaths: [...new Set([input.root, ...input.readOnlyPaths])],
    // In a sandbox the folder appears writable; the writes stay in the state folder (runtime/code-overlay.ts).
    codeDir: input.root,
    ...(input.stateDir === undefined ? {} : { stateDir: input.stateDir }),
  };
}

/** Splits credential values into env variables and headers following the declarations. */
export function credentialDelivery(
  credentials: readonly CredentialSpec[],
  values: Record<string, string>,
): { env: Record<string, string>; headers: Record<string, string>; missing: string[] } {
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const declared = new Map(credentials.map((credential) => [credential.name, credential]));
  for (const [name, value] of Object.entries(values)) {
    const credential = declared.get(name);
    if (credential?.as === 'header' && credential.header !== undefined) headers[credential.header] = value;
    else env[name] = value;
  }
  const missing = credentials.filter((credential) => credential.required && values[credential.name] === undefined).map((c) => c.name);
  return { env, headers, missing };
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

/** Fetches, inspects and discovers a plugin. The caller commits the result or calls `discard()`. */
export async function prepareInstall(request: InstallRequest, settings: InstallerSettings): Promise<PreparedInstall> {
  const { name, source } = request;
  const redact: Redactor = createRedactor(Object.values(request.secretValues));
  const fail = (step: InstallStep, reason: string, extra: { errors?: string[]; warnings?: string[]; cause?: unknown } = {}): QuiverError =>
    installFailed(name, step, redact(reason), {
      ...extra,
      ...(extra.errors === undefined ? {} : { errors: extra.errors.map(redact) }),
    });

  let staging: string | undefined;
  const discard = async (): Promise<void> => {
    if (staging !== undefined) await rm(staging, { recursive: true, force: true });
    staging = undefined;
  };
  const stagingFolder = async (prefix: string): Promise<string> => {
    const root = join(settings.cacheDir, '.staging');
    await mkdir(root, { recursive: true });
    const folder = await mkdtemp(join(root, `${prefix}-`));
    // Whose it is, so start-up recovery removes it only once this process is gone (recovery.ts).
    await writeFile(join(folder, STAGING_OWNER_FILE), JSON.stringify(processOwner() ?? { host: hostname(), pid: process.pid }));
    // Sandboxed plugins run as an unprivileged user: they must be able to read their folder.
    await chmod(folder, 0o755);
    return folder;
  };

  try {
    // 1. Fetch into staging (or reuse the installed cache folder).
    let root: string | undefined;
    let finalPath: string | undefined;
    let pluginFolder: string | undefined;
    let relativeFolder = '.';
    let inPlace = false;
    let sourceType: PluginInstallFields['sourceType'];
    let sourceRecord: Record<string, unknown>;
    let revision: string | undefined;
    const buildWarnings: string[] = [];
    let packageVersion: string | undefined;

    if (request.reuseCachePath !== undefined && source.kind !== 'url') {
      root = request.reuseCachePath;
      finalPath = root;
      if (!(await isDirectory(root))) throw fail('launch', `the plugin's folder ${root} is missing; run 'quiver plugin update ${name}' to fetch it again`);
      sourceType = source.kind;
      sourceRecord = { ...(request.previousSource ?? {}) };
      inPlace = source.kind === 'path';
      relativeFolder = typeof sourceRecord['packageFolder'] === 'string' ? sourceRecord['packageFolder'] : '.';
      revision = typeof sourceRecord['commit'] === 'string' ? sourceRecord['commit'].slice(0, 12) : undefined;
      packageVersion = typeof sourceRecord['version'] === 'string' ? sourceRecord['version'] : undefined;
    } else if (source.kind === 'git') {
      if (/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(source.url)) {
        throw fail('clone', 'git URLs with an embedded password are refused (it would be stored in plain text); use an ssh URL or a git credential helper');
      }
      staging = await stagingFolder('git');
      const tree = join(staging, 'tree');
      let checkout;
      try {
        checkout = await cloneAtRef(source.url, request.ref, tree, { timeoutMs: settings.gitTimeoutMs, env: settings.commandEnv });
      } catch (error) {
        const step = ((error as QuiverError).details as { step?: InstallStep } | undefined)?.step ?? 'clone';
        throw fail(step, (error as Error).message, { cause: error });
      }
      finalPath = join(settings.cacheDir, 'git', checkout.commit);
      root = (await isDirectory(finalPath)) ? finalPath : tree;
      relativeFolder = request.subfolder ?? '.';
      if (root === tree) {
        // A fresh checkout: its dependencies and build, before anything reads it (issue #15).
        try {
          const built = await prepareSourceTree(tree, relativeFolder, {
            label: name,
            trusted: request.trusted,
            installTimeoutMs: settings.npmTimeoutMs,
            buildTimeoutMs: settings.buildTimeoutMs,
            npmCacheDir: settings.npmCacheDir,
            commandEnv: settings.commandEnv,
            runSandboxed: settings.runSandboxed,
          });
          buildWarnings.push(...built.warnings);
        } catch (error) {
          const step = error instanceof SourceBuildError ? ((error.details as { step?: InstallStep }).step ?? 'dependencies') : 'dependencies';
          if (error instanceof QuiverError) throw fail(step, error.message, { cause: error });
          throw error;
        }
      }
      sourceType = 'git';
      revision = checkout.commit.slice(0, 12);
      sourceRecord = {
        url: redactUrlCredentials(source.url),
        ref: request.ref ?? null,
        refKind: checkout.refKind,
        commit: checkout.commit,
        ...(relativeFolder !== '.' ? { packageFolder: relativeFolder } : {}),
      };
    } else if (source.kind === 'npm') {
      staging = await stagingFolder('npm');
      const tree = join(staging, 'tree');
      let installed;
      try {
        installed = await npmInstall(source.spec, tree, {
          trusted: request.trusted,
          timeoutMs: settings.npmTimeoutMs,
          cacheDir: settings.npmCacheDir,
          env: settings.commandEnv,
        });
      } catch (error) {
        throw fail('npm-install', (error as Error).message, { cause: error });
      }
      finalPath = join(settings.cacheDir, 'npm', npmCacheFolderName(installed.packageName, installed.version));
      root = (await isDirectory(finalPath)) ? finalPath : tree;
      relativeFolder = installed.packageFolder;
      sourceType = 'npm';
      packageVersion = installed.version;
      sourceRecord = {
        spec: source.spec,
        packageName: installed.packageName,
        version: installed.version,
        packageFolder: installed.packageFolder,
        trusted: request.trusted,
      };
    } else if (source.kind === 'path') {
      if (!(await isDirectory(source.path))) throw fail('launch', `${source.path} is not a folder`);
      root = source.path;
      finalPath = source.path;
      inPlace = true;
      sourceType = 'path';
      sourceRecord = { path: source.path };
    } else {
      const url = new URL(source.url);
      if (url.username !== '' || url.password !== '') {
        throw fail('launch', 'URLs with embedded credentials are refused (they would be stored in plain text); pass them with --header instead');
      }
      sourceType = 'url';
      sourceRecord = { url: source.url };
    }
    if (request.reuseCachePath === undefined) sourceRecord = { ...sourceRecord, ...(request.sourceExtras ?? {}) };
    if (request.args.length > 0 && request.reuseCachePath === undefined) sourceRecord['args'] = [...request.args];
    if (request.bin !== undefined && request.reuseCachePath === undefined) sourceRecord['bin'] = request.bin;

    // 2. Read quiver.json and package.json; validate the file's shape before starting anything.
    pluginFolder = root === undefined ? undefined : join(root, relativeFolder);
    let rawMetadata: unknown;
    let packageJson: PackageJson | undefined;
    if (pluginFolder !== undefined) {
      const file = await readQuiverJson(root!, relativeFolder);
      if (file.error !== undefined) throw fail('validation', file.error, { errors: [file.error] });
      rawMetadata = file.present ? file.raw : undefined;
      try {
        packageJson = await readPackageJson(root!, relativeFolder);
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

    // 3. The launch.
    let launch: StoredLaunch;
    if (source.kind === 'url') {
      launch = { transport: 'http', url: source.url };
    } else {
      try {
        launch = await resolveLaunch({
          root: root!,
          relativeFolder,
          launch: parsedLaunch?.success === true ? parsedLaunch.data : undefined,
          packageJson,
          binName: request.bin ?? (typeof sourceRecord['bin'] === 'string' ? sourceRecord['bin'] : undefined),
          extraArgs: request.reuseCachePath === undefined ? request.args : Array.isArray(sourceRecord['args']) ? (sourceRecord['args'] as string[]) : [],
        });
      } catch (error) {
        if (error instanceof LaunchResolutionError) throw fail('launch', error.message);
        throw error;
      }
    }

    // 4. Credentials: declared in quiver.json, plus those from headers or the marketplace.
    const declaredCredentials: CredentialSpec[] = [];
    const parsedCredentials = z.array(credentialSpecSchema).safeParse(fileObject?.['credentials'] ?? []);
    const fileCredentials = parsedCredentials.success ? parsedCredentials.data : [];
    for (const credential of [...fileCredentials, ...request.extraCredentials]) {
      if (!declaredCredentials.some((known) => known.name === credential.name)) declaredCredentials.push(credential);
    }
    const delivery = credentialDelivery(declaredCredentials, request.secretValues);
    if (delivery.missing.length > 0) {
      throw fail(
        'launch',
        `missing required credential${delivery.missing.length > 1 ? 's' : ''} ${delivery.missing.map((m) => `'${m}'`).join(', ')}: ` +
          `pass ${delivery.missing.map((m) => `--secret ${m}=…`).join(' ')} (or set it with 'quiver plugin secret set ${name} KEY')`,
      );
    }

    // 5. Discovery: start once (sandboxed per trust), list everything, stop.
    const declaredVersion = typeof fileObject?.['version'] === 'string' ? fileObject['version'] : undefined;
    const version = [declaredVersion ?? packageJson?.version ?? packageVersion, revision]
      .filter((part): part is string => part !== undefined && part !== '')
      .join('+') || (source.kind === 'url' ? 'remote' : 'local');
    // A new plugin has no state folder of its own yet: discovery writes into the staging folder,
    // which goes with it (no `state/installing-<uuid>` is left behind, issue #15).
    let discoveryState: string | undefined;
    if (request.pluginId === undefined && launch.transport === 'stdio') {
      staging ??= await stagingFolder('discovery');
      discoveryState = join(staging, 'state');
    }
    const spec = buildUpstreamSpec({
      pluginId: request.pluginId ?? `installing-${randomUUID()}`,
      stateDir: discoveryState,
      pluginName: name,
      version,
      launch,
      root,
      env: delivery.env,
      headers: delivery.headers,
      readOnlyPaths: settings.readOnlyPaths,
      trustLevel: settings.trustLevel,
    });
    if (spec.transport === 'stdio' && (settings.trustLevel === 'UNVERIFIED' || settings.trustLevel === 'COMMUNITY')) {
      const blocking = await folderBlockingSandbox(spec.cwd ?? settings.cacheDir);
      if (blocking !== undefined) {
        throw fail(
          'launch',
          `sandboxed plugins run as an unprivileged user, who cannot enter ${blocking} (no execute permission for others); ` +
            `set QUIVER_HOME to a folder outside it (e.g. /var/lib/quiver) or run: chmod o+x ${blocking}`,
        );
      }
    }
    let discovery;
    try {
      discovery = await settings.discoverer.discover(spec, { timeoutMs: settings.discoveryTimeoutMs });
    } catch (error) {
      throw fail('discovery', (error as Error).message, { cause: error });
    }
    const seen = new Set<string>();
    const duplicates = new Set<string>();
    for (const tool of discovery.tools) (seen.has(tool.name) ? duplicates : seen).add(tool.name);
    if (duplicates.size > 0) {
      throw fail('discovery', `the server lists tool name${duplicates.size > 1 ? 's' : ''} ${[...duplicates].map((d) => `'${d}'`).join(', ')} more than once; tool names must be unique within a plugin`);
    }
    const registeredTools = discovery.tools.map((tool) => tool.name);

    // 6. Full validation now that the registered tools are known (seed 002: examples cross-checked).
    let metadata: PluginMetadata | undefined;
    const warnings: string[] = [...buildWarnings];
    if (rawMetadata !== undefined) {
      const result = validatePluginMetadata(rawMetadata, { pluginName: name, registeredTools });
      if (!result.valid) {
        throw fail('validation', `quiver.json has ${result.errors.length} error(s): ${result.errors.join(' ')}`, {
          errors: result.errors,
          warnings: result.warnings,
        });
      }
      metadata = result.metadata;
      warnings.push(...result.warnings);
    }
    const discovered: DiscoveredTool[] = discovery.tools.map((tool) => ({
      name: tool.name,
      ...(tool.title === undefined ? {} : { title: tool.title }),
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: tool.inputSchema as Record<string, unknown>,
      ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as Record<string, unknown> }),
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations as Record<string, unknown> }),
    }));
    const description = metadata?.description ?? packageJson?.description ?? discovery.instructions?.slice(0, 2_000);
    const built = buildCatalogTools({
      pluginName: name,
      discovered,
      ...(metadata?.manifest === undefined ? {} : { manifest: metadata.manifest }),
      ...(metadata?.intelligence === undefined ? {} : { intelligence: metadata.intelligence }),
      ...(metadata?.categories === undefined ? {} : { categories: metadata.categories }),
      ...(description === undefined ? {} : { description }),
    });
    warnings.push(...built.warnings);
    if (discovery.tools.length === 0) warnings.push(`Plugin '${name}' registers no tools.`);

    const cachePath = source.kind === 'url' && launch.transport === 'http' && root === undefined ? undefined : finalPath;
    const fields: PluginInstallFields = {
      name,
      displayName: metadata?.manifest?.title ?? discovery.serverInfo?.title ?? null,
      description: description ?? metadata?.manifest?.summary ?? '',
      version,
      sourceType,
      source: { ...sourceRecord, ...(cachePath === undefined ? {} : { cachePath }), ...(inPlace ? { inPlace: true } : {}) },
      launch: { ...launch } as Record<string, unknown>,
      manifest: (metadata?.manifest as Record<string, unknown> | undefined) ?? null,
      manifestWarnings: warnings.map(redact),
      visibility: metadata?.manifest?.visibility ?? 'on-demand',
      discovery: {
        serverInfo: discovery.serverInfo ?? null,
        tools: registeredTools.length,
        resources: discovery.resources.map((resource) => ({
          uri: resource.uri,
          name: resource.name,
          ...(resource.description === undefined ? {} : { description: resource.description }),
          ...(resource.mimeType === undefined ? {} : { mimeType: resource.mimeType }),
        })),
        prompts: discovery.prompts.map((prompt) => ({
          name: prompt.name,
          ...(prompt.description === undefined ? {} : { description: prompt.description }),
          ...(prompt.arguments === undefined ? {} : { arguments: prompt.arguments }),
        })),
        sandbox: discovery.launch ?? null,
        durationMs: Math.round(discovery.durationMs),
      },
      credentials: declaredCredentials.map((credential) => ({ ...credential })),
    };

    const stagedTree = staging === undefined ? undefined : join(staging, 'tree');
    return {
      fields,
      tools: built.tools,
      categories: (metadata?.categories ?? []).map(({ tools: _tools, ...category }) => category),
      pageMappings: metadata?.pageMappings ?? [],
      shippedPid: metadata?.intelligence as Record<string, unknown> | undefined,
      registeredTools,
      warnings: fields.manifestWarnings,
      cachePath,
      inPlace,
      async place() {
        if (stagedTree === undefined || finalPath === undefined || root === finalPath) {
          await discard();
          return false;
        }
        await mkdir(join(finalPath, '..'), { recursive: true });
        try {
          await rename(stagedTree, finalPath);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // Another install of the same commit / version won the race: use its folder.
          if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
          await discard();
          return false;
        }
        await discard();
        return true;
      },
      discard,
    };
  } catch (error) {
    await discard();
    throw error;
  }
}
