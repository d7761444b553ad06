/**
 * @module plugins/service
 * The plugins service (DESIGN §3.5, seed 003): install from git, npm, folders, remote URLs and
 * the marketplace; discover; enable per workspace and project; credentials; update and
 * remove; Plugin Intelligence Documents (seed 000 §6.3); the marketplace catalog.
 *
 * Atomic install. The plugin row is reserved first, as `failed` (never served) with this
 * process's lease (migration 0033), so the name is claimed before anything is fetched. The
 * filesystem work and discovery happen in a staging folder (`installer.ts`); then the install
 * fields are written, the folder is moved into place, the catalog syncs its tools (its own
 * transaction, seed 001 §9 — the one path for plugin tools), and one transaction makes the row
 * `active`, clears the lease and writes enablement, secrets and the shipped PID. Any failure
 * deletes the row (tools, versions, enablements and secrets cascade) and the cache folder this
 * install created, so nothing is left behind; a crash leaves a leased row that start-up
 * recovery (`recovery.ts`) rolls back once its process is gone. An update writes the new install fields first and restores the old
 * ones if the sync fails; the old cache folder is removed only after the new one is in use.
 *
 * @example
 * const plugins = createPluginService({ db, catalog, supervisor, cacheDir: join(home, 'plugins'), secrets });
 * await plugins.add('npm:@modelcontextprotocol/server-memory');
 * const tools = await plugins.effectiveTools({ workspace: 'default' });
 */
import { rm } from 'node:fs/promises';
import { posix } from 'node:path';
import { hostname } from 'node:os';
import { z } from 'zod';
import { QuiverError, ErrorCodes, invalidInput, isQuiverError, notFound } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import { validateManifest, type PluginManifest } from '../core/manifest.ts';
import { assertPluginName, slugifyPluginName } from '../core/names.ts';
import { credentialSpecSchema, ENV_NAME_PATTERN, type CredentialSpec } from '../core/plugin-metadata.ts';
import type { ToolRecord } from '../core/tool.ts';
import type { CatalogService } from '../catalog/service.ts';
import type { Supervisor } from '../runtime/supervisor.ts';
import type { TrustLevel, UpstreamSpec } from '../runtime/types.ts';
import { parseUpstreamSpec } from '../runtime/types.ts';
import { runOneShot, type OneShotRequest } from '../runtime/one-shot.ts';
import type { Database, Queryable } from '../store/database.ts';
import { clearEnablement, effectivePluginIds, setEnablement } from '../store/repositories/enablement.ts';
import { isUniqueViolation, isUuid } from '../store/repositories/mapping.ts';
import {
  findMarketplaceServer,
  listMarketplaceServers,
  upsertMarketplaceServers,
  type MarketplaceRecord,
} from '../store/repositories/marketplace.ts';
import {
  deletePluginEnablements,
  deletePluginRecord,
  findIntelligence,
  findPluginRecordById,
  findPluginRecordByName,
  installFieldsOf,
  listIntelligence,
  listPluginRecords,
  pluginsUsingCachePath,
  setPluginStatus,
  updatePluginInstall,
  upsertIntelligence,
  type IntelligenceRecord,
  type PluginRecord,
} from '../store/repositories/plugins.ts';
import {
  claimPluginInstall,
  findInstallReservation,
  finishPluginInstall,
  renewPluginInstallLease,
  reservePluginInstall,
} from '../store/repositories/plugin-install-leases.ts';
import { processOwner } from '../store/process-owner.ts';
import { deletePluginSecrets, deleteSecret, listSecrets, upsertSecret } from '../store/repositories/secrets.ts';
import { deleteAllPluginEnv, deletePluginEnv, listPluginEnv, upsertPluginEnv } from '../store/repositories/plugin-env.ts';
import { pluginStateDir } from '../runtime/state-dir.ts';
import {
  findProjectByName,
  findWorkspaceByName,
  insertProject,
  insertWorkspace,
  listPluginEnablements,
  listProjects,
  listWorkspaces,
  listWorkspaceExposureModes,
  setWorkspaceExposureMode,
  type ProjectRecord,
  type WorkspaceRecord,
} from '../store/repositories/workspaces.ts';
import { assessPid, generatePid, pidSearchFields, PID_SCHEMA_VERSION, PID_SEARCH_FIELDS } from './intelligence.ts';
import { buildUpstreamSpec, credentialDelivery, installFailed, prepareInstall, type InstallRequest, type PreparedInstall } from './installer.ts';
import type { StoredLaunch } from './launch.ts';
import { lexicalSearch } from './lexical-search.ts';
import { assertSecretAllowed, assertSettingAllowed, mergeLaunchEnv } from './plugin-env.ts';
import { credentialNameForHeader, installPlanFor, marketplaceServerSchema, parseMarketplaceCatalog } from './marketplace.ts';
import type { SecretBox } from './secret-box.ts';
import { installAbandoned, INSTALL_LEASE_SECONDS } from './recovery.ts';
import { defaultNameHint, parsePluginSource, type PluginSource } from './sources.ts';

/** The workspace a plugin is enabled in when none is named. */
export const DEFAULT_WORKSPACE = 'default';

/** Options of `createPluginService`. */
export interface PluginServiceOptions {
  db: Database;
  /** The catalog: every plugin tool enters through `syncPlugin` (seed 001 §9). */
  catalog: Pick<CatalogService, 'syncPlugin' | 'listTools'>;
  /** The runtime: `discover` for install-time discovery; `stop` to retire old processes. */
  supervisor: Pick<Supervisor, 'discover'> & Partial<Pick<Supervisor, 'stop' | 'host'>>;
  /** The plugin cache root (`<home>/plugins`): `git/<commit>`, `npm/<package>@<version>`, `.staging`. */
  cacheDir: string;
  /** Seals credentials at rest (`createSecretBox(loadSecretKey(…).key)`). */
  secrets: SecretBox;
  logger?: Logger;
  clock?: () => Date;
  /** Bound on one discovery (start + handshake + lists), ms. Default 30 000. */
  discoveryTimeoutMs?: number;
  /** Bound on one git command, ms. Default 120 000. */
  gitTimeoutMs?: number;
  /** Bound on one npm install, ms. Default 300 000. */
  npmTimeoutMs?: number;
  /** Bound on a git source's build step (in the sandbox), ms. Default 300 000. */
  buildTimeoutMs?: number;
  /** Builds run without a sandbox where bubblewrap is unusable (QUIVER_DANGEROUSLY_ALLOW_UNSANDBOXED). */
  dangerouslyAllowUnsandboxed?: boolean;
  /** npm's cache folder, shared by every install (default: npm's own). */
  npmCacheDir?: string;
  /** Environment of git and npm (PATH, HOME, proxies, registry). Default: inherited. */
  commandEnv?: Record<string, string | undefined>;
  /** Host paths every local plugin may read in its sandbox (e.g. a shared runtime). */
  readOnlyPaths?: readonly string[];
  /** Trust level of plugins not yet verified (default UNVERIFIED: sandboxed, no network). */
  defaultTrustLevel?: TrustLevel;
  /** The supervisor's `stateRoot` (`<home>/state`): `show` reports each plugin's state folder in it. */
  stateRoot?: string;
}

/** Options of `add`. */
export interface AddPluginOptions {
  /** Install under this name (kebab-case) instead of the derived one. */
  name?: string | undefined;
  /** git branch, tag or commit. */
  ref?: string | undefined;
  /** The plugin's folder inside a git repository (a monorepo package), e.g. `packages/server`. */
  path?: string | undefined;
  /** Enable in this workspace (default `default`). */
  workspace?: string | undefined;
  /** Enable for this project only (of `workspace`). */
  project?: string | undefined;
  /** HTTP headers for a remote plugin; stored encrypted as header credentials. */
  headers?: Record<string, string> | undefined;
  /** Credential values (env variables or declared headers); stored encrypted. */
  secrets?: Record<string, string> | undefined;
  /** Arguments appended to the launch command (e.g. the folder a filesystem server serves). */
  args?: readonly string[] | undefined;
  /** Which package.json `bin` entry to run when there are several. */
  bin?: string | undefined;
  /** Run npm lifecycle scripts for this package. */
  trusted?: boolean | undefined;
}

/** A scope given by names. */
export interface ScopeInput {
  workspace?: string | undefined;
  project?: string | undefined;
}

/** What `add`, `update` and `sync` report. */
export interface InstallReport {
  plugin: PublicPlugin;
  /** Tool names by what the sync did to them. */
  tools: { inserted: string[]; updated: string[]; deleted: string[]; revived: string[]; unchanged: number; total: number };
  warnings: string[];
  /** Where it was enabled (add only). */
  enabledIn?: { workspace: string; project: string | null };
}

/** A plugin as returned to fronts: no secret values anywhere. */
export interface PublicPlugin extends Omit<PluginRecord, 'credentials'> {
  credentials: Array<CredentialSpec & { set: boolean }>;
}

/** `show` output. */
export interface PluginDetails {
  plugin: PublicPlugin;
  enablements: Array<{ workspace: string; project: string | null; enabled: boolean }>;
  secrets: Array<{ key: string; declared: boolean; updatedAt: Date }>;
  /** Non-secret settings (`plugin env set`), values in plain. */
  env: PluginSetting[];
  /** The plugin's writable state folder (its HOME, and where writes to its own folder are kept); null when unknown. */
  stateDir: string | null;
  toolCount: number;
  intelligence: { status: IntelligenceRecord['validationStatus']; origin: IntelligenceRecord['origin']; contentHash: string } | null;
}

/** A non-secret setting of a plugin. */
export interface PluginSetting {
  key: string;
  value: string;
  updatedAt: Date;
}

/** A marketplace search hit. */
export interface MarketplaceHit {
  name: string;
  title: string | null;
  description: string;
  version: string | null;
  /** The `plugin add` source that installs it. */
  install: string;
  installable: boolean;
  /** Installed under this plugin name, if it is. */
  installedAs: string | null;
  score: number;
}

/** The plugins service. */
export interface PluginService {
  /** Installs a plugin from a source string (git URL, `npm:<spec>`, folder, http(s) URL, `market:<name>`). */
  add(source: string, options?: AddPluginOptions): Promise<InstallReport>;
  list(options?: { includeRemoved?: boolean }): Promise<PublicPlugin[]>;
  /** A plugin by name or id, with enablements, secret keys (never values) and PID status. */
  show(plugin: string): Promise<PluginDetails>;
  /** A plugin's live catalog tools. */
  tools(plugin: string): Promise<ToolRecord[]>;
  enable(plugin: string, scope?: ScopeInput): Promise<void>;
  disable(plugin: string, scope?: ScopeInput): Promise<void>;
  /** Turns the plugin on or off everywhere (status `active` / `disabled`) without touching enablement. */
  setStatus(plugin: string, status: 'active' | 'disabled'): Promise<PublicPlugin>;
  /** Moves to a new ref (git) or version (npm), re-discovers and re-syncs differentially. */
  update(plugin: string, options?: { ref?: string | undefined; version?: string | undefined }): Promise<InstallReport>;
  /** Re-discovers from the installed folder (no fetch) and re-syncs. */
  sync(plugin: string): Promise<InstallReport>;
  /** Disables, soft-deletes its tools, marks it removed and cleans its cache folder. */
  remove(plugin: string): Promise<void>;
  /** Tools of every plugin in effect for a workspace (and project). */
  effectiveTools(scope?: ScopeInput): Promise<ToolRecord[]>;
  /** Stores a credential, sealed with AES-256-GCM. */
  setSecret(plugin: string, key: string, value: string): Promise<{ key: string; declared: boolean }>;
  deleteSecret(plugin: string, key: string): Promise<boolean>;
  /** Stores a non-secret setting, passed to the plugin as an environment variable (plugin-env.ts has the rules). */
  setEnv(plugin: string, key: string, value: string): Promise<PluginSetting>;
  /** Removes a setting; false when it was not set. */
  unsetEnv(plugin: string, key: string): Promise<boolean>;
  /** The plugin's settings, by key. */
  listEnv(plugin: string): Promise<PluginSetting[]>;
  /** Decrypted env variables and headers for the runtime; throws `missing_credential` naming required keys not set. */
  resolveLaunchEnv(plugin: string): Promise<{ env: Record<string, string>; headers: Record<string, string> }>;
  /** The runtime spec of an installed plugin, credentials included (hand it to the supervisor only). */
  upstreamSpec(plugin: string): Promise<UpstreamSpec>;
  listWorkspaces(): Promise<WorkspaceRecord[]>;
  createWorkspace(input: { name: string; displayName?: string | undefined }): Promise<WorkspaceRecord>;
  /** Sets the MCP exposure mode (`search`, `capabilities`, `all`) of a workspace; null restores the default. */
  setWorkspaceExposureMode(workspace: string, mode: 'search' | 'capabilities' | 'all' | null): Promise<void>;
  /** Exposure modes set per workspace, keyed by workspace id and name. */
  workspaceExposureModes(): Promise<Map<string, string>>;
  listProjects(workspace: string): Promise<ProjectRecord[]>;
  createProject(workspace: string, input: { name: string; displayName?: string | undefined }): Promise<ProjectRecord>;
  getIntelligence(plugin: string): Promise<IntelligenceRecord>;
  /** Generates a PID from the catalog's tools and the manifest, stores it and returns it. */
  generateIntelligence(plugin: string): Promise<IntelligenceRecord>;
  /** Validates and stores an admin-written PID; hard errors reject it with the full list. */
  putIntelligence(plugin: string, document: unknown): Promise<IntelligenceRecord>;
  exportIntelligence(): Promise<IntelligenceRecord[]>;
  searchIntelligence(query: string, limit?: number): Promise<Array<{ plugin: string; score: number; document: IntelligenceRecord }>>;
  /** Imports a catalog in MCP Registry server.json format (one, an array, or `{servers}`). */
  importMarketplace(document: unknown, options?: { source?: string }): Promise<{ imported: number; inserted: number; updated: number; warnings: string[] }>;
  listMarketplace(): Promise<MarketplaceRecord[]>;
  /** Lexical search over marketplace names, titles and descriptions: installable suggestions. */
  searchMarketplace(query: string, limit?: number): Promise<MarketplaceHit[]>;
}

const secretValueSchema = z.string().min(1, 'a secret value must not be empty').max(65_536, 'a secret value is at most 64 KiB');
const secretKeySchema = z.string().regex(ENV_NAME_PATTERN, 'secret keys are environment-variable names: a letter or "_" then letters, digits, "_"').max(128);
const scopeNameSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'names are kebab-case: lowercase letters, digits and dashes, 1-63 characters');

function parseCredentials(value: unknown): CredentialSpec[] {
  const parsed = z.array(credentialSpecSchema).safeParse(value);
  return parsed.success ? parsed.data : [];
}

/** A monorepo sub-folder given with `--path`: relative, inside the repository, normalised. */
function repositorySubfolder(text: string): string | undefined {
  const trimmed = text.trim().replace(/\\/g, '/');
  if (trimmed === '' || /[\0\n\r]/.test(trimmed)) throw invalidInput('--path needs a folder inside the repository, e.g. packages/server');
  const normalised = posix.normalize(trimmed).replace(/\/+$/, '');
  if (posix.isAbsolute(normalised) || normalised === '..' || normalised.startsWith('../')) {
    throw invalidInput(`--path must be a folder inside the repository, got '${text}'`);
  }
  return normalised === '.' || normalised === '' ? undefined : normalised;
}

/** Creates the plugins service. */
export function createPluginService(options: PluginServiceOptions): PluginService {
  const { db, catalog, supervisor, secrets } = options;
  const logger = (options.logger ?? silentLogger).child({ component: 'plugins' });
  const now = options.clock ?? (() => new Date());
  const trustLevel = options.defaultTrustLevel ?? 'UNVERIFIED';
  const settings = {
    cacheDir: options.cacheDir,
    discoverer: supervisor,
    discoveryTimeoutMs: options.discoveryTimeoutMs ?? 30_000,
    gitTimeoutMs: options.gitTimeoutMs ?? 120_000,
    npmTimeoutMs: options.npmTimeoutMs ?? 300_000,
    buildTimeoutMs: options.buildTimeoutMs ?? 300_000,
    // A git source's build runs the repository's code: in the sandbox of an UNVERIFIED plugin.
    runSandboxed: supervisor.host
      ? (request: OneShotRequest) =>
          runOneShot(request, { host: supervisor.host!(), dangerouslyAllowUnsandboxed: options.dangerouslyAllowUnsandboxed ?? false })
      : undefined,
    npmCacheDir: options.npmCacheDir,
    commandEnv: options.commandEnv,
    readOnlyPaths: options.readOnlyPaths ?? [],
    trustLevel,
  };

  const secretContext = (pluginId: string, key: string): string => `quiver/plugin-secret/${pluginId}/${key}`;

  async function requirePlugin(reference: string, queryable: Queryable = db, options: { includeRemoved?: boolean } = {}): Promise<PluginRecord> {
    const record = isUuid(reference) ? await findPluginRecordById(queryable, reference) : await findPluginRecordByName(queryable, reference);
    if (record === undefined || (record.status === 'removed' && options.includeRemoved !== true)) throw notFound('plugin', reference);
    return record;
  }

  async function resolveScope(scope: ScopeInput, queryable: Queryable = db): Promise<{ workspace: WorkspaceRecord; project: ProjectRecord | undefined }> {
    const workspaceName = scope.workspace ?? DEFAULT_WORKSPACE;
    const workspace = await findWorkspaceByName(queryable, workspaceName);
    if (workspace === undefined) throw notFound('workspace', workspaceName);
    if (scope.project === undefined) return { workspace, project: undefined };
    const project = await findProjectByName(queryable, workspace.id, scope.project);
    if (project === undefined) throw notFound('project', `${workspaceName}/${scope.project}`);
    return { workspace, project };
  }

  async function secretValues(pluginId: string): Promise<Record<string, string>> {
    const values: Record<string, string> = {};
    for (const row of await listSecrets(db, pluginId)) values[row.key] = secrets.open(row, secretContext(pluginId, row.key));
    return values;
  }

  async function toPublic(record: PluginRecord): Promise<PublicPlugin> {
    const stored = new Set((await listSecrets(db, record.id)).map((row) => row.key));
    return { ...record, credentials: parseCredentials(record.credentials).map((credential) => ({ ...credential, set: stored.has(credential.name) })) };
  }

  async function allTools(pluginId: string): Promise<ToolRecord[]> {
    const tools: ToolRecord[] = [];
    for (let offset = 0; ; offset += 500) {
      const page = await catalog.listTools({ pluginId, limit: 500, offset });
      tools.push(...page.items);
      if (page.items.length < 500 || tools.length >= page.total) return tools;
    }
  }

  /** Removes a cache folder unless it is the user's own folder or another live plugin uses it. */
  async function releaseCache(path: unknown, inPlace: boolean, exceptId: string | null): Promise<void> {
    if (typeof path !== 'string' || inPlace || !path.startsWith(options.cacheDir)) return;
    if ((await pluginsUsingCachePath(db, path, exceptId)).length > 0) return;
    await rm(path, { recursive: true, force: true });
  }

  async function syncTools(name: string, prepared: PreparedInstall) {
    try {
      return await catalog.syncPlugin({
        pluginId: name,
        version: prepared.fields.version ?? 'local',
        tools: prepared.tools,
        categories: payloadCategories(prepared),
        pageMappings: prepared.pageMappings,
      });
    } catch (error) {
      throw installFailed(name, 'sync', (error as Error).message, { cause: error });
    }
  }

  /**
   * The declared categories, plus one plugin category for every category a tool names that the
   * plugin did not declare (the manifest's seed 002 `category`, e.g. "data"): the catalog only
   * accepts tools in categories it knows.
   */
  function payloadCategories(prepared: PreparedInstall) {
    const categories = prepared.categories.map((category) => ({
      name: category.name,
      ...(category.displayName === undefined ? {} : { displayName: category.displayName }),
      ...(category.description === undefined ? {} : { description: category.description }),
      ...(category.parent === undefined ? {} : { parent: category.parent }),
    }));
    const known = new Set(categories.map((category) => category.name));
    for (const tool of prepared.tools) {
      if (tool.category !== undefined && !known.has(tool.category)) {
        known.add(tool.category);
        categories.push({ name: tool.category });
      }
    }
    return categories;
  }

  async function storeShippedPid(queryable: Queryable, pluginId: string, name: string, prepared: PreparedInstall): Promise<void> {
    if (prepared.shippedPid === undefined) return;
    const assessment = assessPid(prepared.shippedPid, { pluginName: name, registeredTools: prepared.registeredTools });
    await upsertIntelligence(
      queryable,
      {
        pluginId,
        version: prepared.fields.version ?? 'local',
        pid: prepared.shippedPid,
        schemaVersion: typeof prepared.shippedPid['version'] === 'string' ? prepared.shippedPid['version'].slice(0, 20) : PID_SCHEMA_VERSION,
        contentHash: assessment.contentHash,
        validationStatus: assessment.status,
        validationScore: assessment.score,
        validationErrors: assessment.validation.errors,
        validationWarnings: assessment.validation.warnings,
        origin: 'shipped',
      },
      now(),
    );
  }

  async function storeSecrets(queryable: Queryable, pluginId: string, values: Record<string, string>): Promise<void> {
    for (const [key, value] of Object.entries(values)) {
      await upsertSecret(queryable, pluginId, key, secrets.seal(value, secretContext(pluginId, key)), now());
    }
  }

  function reportOf(plugin: PublicPlugin, prepared: PreparedInstall, sync: Awaited<ReturnType<CatalogService['syncPlugin']>>): InstallReport {
    return {
      plugin,
      tools: {
        inserted: sync.inserted,
        updated: sync.updated,
        deleted: sync.deleted,
        revived: sync.revived,
        unchanged: sync.unchanged,
        total: prepared.tools.length,
      },
      warnings: prepared.warnings,
    };
  }

  /**
   * Commits a prepared install into the row reserved for it (status `failed`, leased). The
   * install fields (with the cache path) are written before the folder is placed, so a crash at
   * any point leaves a row that start-up recovery can roll back together with its folder.
   */
  async function commitReserved(
    id: string,
    prepared: PreparedInstall,
    scope: { workspaceId: string; projectId: string | undefined },
    values: Record<string, string>,
  ) {
    const name = prepared.fields.name;
    let createdCache = false;
    try {
      await updatePluginInstall(db, id, prepared.fields, 'failed', now());
      createdCache = await prepared.place();
      const sync = await syncTools(name, prepared);
      await db.transaction(async (tx) => {
        await setPluginStatus(tx, id, 'active', now());
        await finishPluginInstall(tx, id);
        await setEnablement(tx, { pluginId: id, workspaceId: scope.workspaceId, projectId: scope.projectId ?? null, enabled: true });
        await storeSecrets(tx, id, values);
        await storeShippedPid(tx, id, name, prepared);
      });
      return sync;
    } catch (error) {
      // Compensation: the row (with its tools, versions, categories, enablement, secrets) and the folder go.
      await deletePluginRecord(db, id).catch((cleanup) => logger.error({ err: cleanup, plugin: name }, 'install cleanup failed'));
      if (createdCache && prepared.cachePath !== undefined) await rm(prepared.cachePath, { recursive: true, force: true });
      await prepared.discard();
      if (isQuiverError(error, 'install_failed') || isQuiverError(error, ErrorCodes.conflict)) throw error;
      throw installFailed(name, 'sync', (error as Error).message, { cause: error });
    }
  }

  /**
   * Reserves the row of a new install (or takes over one a crashed install left): the name is
   * claimed before anything is fetched, so a second install of it fails at once, and the row
   * carries this process's lease (renewed until `stop()`) for start-up recovery.
   */
  async function reserveInstall(name: string, sourceKind: string, existing: PluginRecord | undefined): Promise<{ id: string; stop(): void }> {
    const owner = processOwner() ?? { host: hostname(), pid: process.pid };
    let id: string;
    if (existing === undefined) {
      try {
        id = await reservePluginInstall(db, { name, sourceType: sourceKind, source: {}, owner, leaseSeconds: INSTALL_LEASE_SECONDS });
      } catch (error) {
        if (isUniqueViolation(error)) throw new QuiverError(ErrorCodes.conflict, `a plugin named '${name}' already exists`, { details: { name }, cause: error });
        throw error;
      }
    } else {
      const reservation = await findInstallReservation(db, existing.id, INSTALL_LEASE_SECONDS);
      const claimed =
        reservation !== undefined &&
        installAbandoned(reservation) &&
        (await claimPluginInstall(db, { id: existing.id, previousOwner: reservation.rawOwner, owner, leaseSeconds: INSTALL_LEASE_SECONDS }));
      if (!claimed) {
        throw new QuiverError(ErrorCodes.conflict, `plugin '${name}' is being installed by another process; try again once it has finished`, {
          details: { name, pluginId: existing.id },
        });
      }
      id = existing.id;
    }
    const renew = setInterval(() => {
      void renewPluginInstallLease(db, id, owner, INSTALL_LEASE_SECONDS).catch((error) => logger.warn({ err: error, plugin: name }, 'renewing the install lease failed'));
    }, (INSTALL_LEASE_SECONDS * 1000) / 3);
    renew.unref();
    return { id, stop: () => clearInterval(renew) };
  }

  /** Commits a prepared install over an existing row (update, sync, or re-adding a removed plugin). */
  async function commitExisting(
    existing: PluginRecord,
    prepared: PreparedInstall,
    extra: { status: 'active' | 'disabled'; scope?: { workspaceId: string; projectId: string | undefined }; values?: Record<string, string> },
  ) {
    const name = existing.name;
    let createdCache = false;
    let rewritten = false;
    try {
      createdCache = await prepared.place();
      await updatePluginInstall(db, existing.id, prepared.fields, extra.status, now());
      rewritten = true;
      const sync = await syncTools(name, prepared);
      await db.transaction(async (tx) => {
        if (extra.scope !== undefined) {
          await setEnablement(tx, { pluginId: existing.id, workspaceId: extra.scope.workspaceId, projectId: extra.scope.projectId ?? null, enabled: true });
        }
        if (extra.values !== undefined) await storeSecrets(tx, existing.id, extra.values);
        await storeShippedPid(tx, existing.id, name, prepared);
      });
      return sync;
    } catch (error) {
      if (rewritten) {
        await updatePluginInstall(db, existing.id, installFieldsOf(existing), existing.status, now()).catch((cleanup) =>
          logger.error({ err: cleanup, plugin: name }, 'restoring the plugin after a failed update failed'),
        );
      }
      if (createdCache && prepared.cachePath !== undefined) await rm(prepared.cachePath, { recursive: true, force: true });
      await prepared.discard();
      if (isQuiverError(error, 'install_failed')) throw error;
      throw installFailed(name, 'sync', (error as Error).message, { cause: error });
    }
  }

  function normaliseHeaders(headers: Record<string, string>): { credentials: CredentialSpec[]; values: Record<string, string> } {
    const credentials: CredentialSpec[] = [];
    const values: Record<string, string> = {};
    for (const [header, value] of Object.entries(headers)) {
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(header)) throw invalidInput(`'${header}' is not a valid HTTP header name`);
      const name = credentialNameForHeader(header);
      credentials.push({ name, required: true, as: 'header', header });
      values[name] = parseSecretValue(value);
    }
    return { credentials, values };
  }

  function parseSecretValue(value: string): string {
    const parsed = secretValueSchema.safeParse(value);
    // The message never includes the value itself.
    if (!parsed.success) throw invalidInput(parsed.error.issues[0]?.message ?? 'invalid secret value');
    return parsed.data;
  }

  async function add(sourceText: string, addOptions: AddPluginOptions = {}): Promise<InstallReport> {
    let source: PluginSource = parsePluginSource(sourceText);
    // A marketplace entry is named after its registry name (io.github.user/weather → weather).
    const hint = defaultNameHint(source);
    const extraCredentials: CredentialSpec[] = [];
    const values: Record<string, string> = {};
    let args = [...(addOptions.args ?? [])];
    const sourceExtras: Record<string, unknown> = {};

    if (source.kind === 'market') {
      const entry = await findMarketplaceServer(db, source.name);
      if (entry === undefined) throw notFound('marketplace server', source.name);
      const plan = installPlanFor(marketplaceServerSchema.parse(entry.server));
      extraCredentials.push(...plan.credentials);
      Object.assign(values, plan.defaults);
      sourceExtras['marketplace'] = entry.name;
      if (plan.kind === 'npm') {
        args = [...plan.args, ...args];
        source = { kind: 'npm', spec: plan.spec };
      } else source = { kind: 'url', url: plan.url };
    }
    if (addOptions.headers !== undefined && Object.keys(addOptions.headers).length > 0) {
      const headers = normaliseHeaders(addOptions.headers);
      for (const credential of headers.credentials) {
        const at = extraCredentials.findIndex((known) => known.name === credential.name);
        if (at >= 0) extraCredentials.splice(at, 1);
        extraCredentials.push(credential);
      }
      Object.assign(values, headers.values);
    }
    for (const [key, value] of Object.entries(addOptions.secrets ?? {})) {
      const parsedKey = secretKeySchema.safeParse(key);
      if (!parsedKey.success) throw invalidInput(`invalid secret key '${key}': ${parsedKey.error.issues[0]?.message ?? ''}`);
      values[key] = parseSecretValue(value);
    }

    const name = addOptions.name ?? slugifyPluginName(hint);
    assertPluginName(name);
    const scope = await resolveScope({ workspace: addOptions.workspace, project: addOptions.project });
    const existing = await findPluginRecordByName(db, name);
    if (existing !== undefined && existing.status !== 'removed' && existing.status !== 'failed') {
      throw new QuiverError(
        ErrorCodes.conflict,
        `a plugin named '${name}' is already installed (${existing.sourceType}); use 'quiver plugin update ${name}', or --name to install another copy`,
        { details: { name, pluginId: existing.id } },
      );
    }
    if (addOptions.ref !== undefined && source.kind !== 'git') throw invalidInput('--ref only applies to git sources');
    const subfolder = addOptions.path === undefined ? undefined : repositorySubfolder(addOptions.path);
    if (subfolder !== undefined && source.kind !== 'git') throw invalidInput('--path only applies to git sources (give a folder source its sub-folder directly)');
    logger.info({ plugin: name, source: source.kind }, 'installing plugin');
    // A removed plugin is re-installed over its row; a new one (or a crashed install's leftover) gets a reserved row.
    const reinstalling = existing?.status === 'removed';
    const reservation = reinstalling ? undefined : await reserveInstall(name, source.kind, existing);
    const request: InstallRequest = {
      source: source as InstallRequest['source'],
      name,
      pluginId: reinstalling ? existing?.id : undefined,
      ref: addOptions.ref,
      subfolder,
      args,
      bin: addOptions.bin,
      trusted: addOptions.trusted ?? false,
      secretValues: values,
      extraCredentials,
      sourceExtras,
    };
    const scopeIds = { workspaceId: scope.workspace.id, projectId: scope.project?.id };
    let prepared: PreparedInstall;
    let sync: Awaited<ReturnType<typeof syncTools>>;
    try {
      try {
        prepared = await prepareInstall(request, settings);
      } catch (error) {
        if (reservation !== undefined) await deletePluginRecord(db, reservation.id).catch((cleanup) => logger.error({ err: cleanup, plugin: name }, 'install cleanup failed'));
        throw error;
      }
      sync =
        reservation === undefined
          ? await commitExisting(existing!, prepared, { status: 'active', scope: scopeIds, values })
          : await commitReserved(reservation.id, prepared, scopeIds, values);
    } finally {
      reservation?.stop();
    }
    const record = await requirePlugin(name);
    logger.info({ plugin: name, tools: prepared.tools.length, inserted: sync.inserted.length }, 'plugin installed');
    return { ...reportOf(await toPublic(record), prepared, sync), enabledIn: { workspace: scope.workspace.name, project: scope.project?.name ?? null } };
  }

  function sourceOf(record: PluginRecord, overrides: { ref?: string | undefined; version?: string | undefined }): InstallRequest['source'] {
    const source = record.source;
    switch (record.sourceType) {
      case 'git':
        return { kind: 'git', url: String(source['url']) };
      case 'npm': {
        const packageName = String(source['packageName'] ?? source['spec']);
        return { kind: 'npm', spec: overrides.version !== undefined ? `${packageName}@${overrides.version}` : String(source['spec']) };
      }
      case 'path':
        return { kind: 'path', path: String(source['path']) };
      case 'url':
        return { kind: 'url', url: String(source['url']) };
      default:
        throw invalidInput(`plugin '${record.name}' registered itself through the sync API; it has no source to install from`);
    }
  }

  async function reinstall(reference: string, mode: 'update' | 'sync', overrides: { ref?: string | undefined; version?: string | undefined } = {}): Promise<InstallReport> {
    const existing = await requirePlugin(reference);
    if (overrides.ref !== undefined && existing.sourceType !== 'git') throw invalidInput('--ref only applies to plugins installed from git');
    if (overrides.version !== undefined && existing.sourceType !== 'npm') throw invalidInput('--version only applies to plugins installed from npm');
    const values = await secretValues(existing.id);
    const credentials = parseCredentials(existing.credentials);
    const previousSource = existing.source;
    // update refetches from the remote; sync (and update of a folder or URL) re-discovers what is installed.
    const refetch = mode === 'update' && (existing.sourceType === 'git' || existing.sourceType === 'npm');
    const request: InstallRequest = {
      source: sourceOf(existing, overrides),
      name: existing.name,
      pluginId: existing.id,
      ref: overrides.ref ?? (typeof previousSource['ref'] === 'string' ? previousSource['ref'] : undefined),
      subfolder: existing.sourceType === 'git' && typeof previousSource['packageFolder'] === 'string' ? previousSource['packageFolder'] : undefined,
      args: Array.isArray(previousSource['args']) ? (previousSource['args'] as string[]) : [],
      bin: typeof previousSource['bin'] === 'string' ? previousSource['bin'] : undefined,
      trusted: previousSource['trusted'] === true,
      secretValues: values,
      // Header and marketplace credentials are not in quiver.json: keep the declarations.
      extraCredentials: credentials,
      sourceExtras: typeof previousSource['marketplace'] === 'string' ? { marketplace: previousSource['marketplace'] } : {},
      reuseCachePath: refetch ? undefined : typeof previousSource['cachePath'] === 'string' ? previousSource['cachePath'] : undefined,
      previousSource,
    };
    const prepared = await prepareInstall(request, settings);
    const sync = await commitExisting(existing, prepared, { status: existing.status === 'disabled' ? 'disabled' : 'active' });
    const oldCache = previousSource['cachePath'];
    if (oldCache !== prepared.cachePath) await releaseCache(oldCache, previousSource['inPlace'] === true, null);
    await supervisor.stop?.(existing.id).catch(() => undefined);
    const record = await requirePlugin(existing.id);
    logger.info({ plugin: record.name, mode, version: record.version }, 'plugin re-installed');
    return reportOf(await toPublic(record), prepared, sync);
  }

  async function intelligenceFor(record: PluginRecord, document: Record<string, unknown>, origin: IntelligenceRecord['origin']): Promise<IntelligenceRecord> {
    const registeredTools = (await allTools(record.id)).map((tool) => tool.name);
    const assessment = assessPid(document, { pluginName: record.name, registeredTools });
    if (!assessment.validation.valid) {
      throw invalidInput(`the intelligence document has ${assessment.validation.errors.length} error(s): ${assessment.validation.errors.join(' ')}`, {
        errors: assessment.validation.errors,
        warnings: assessment.validation.warnings,
      });
    }
    await upsertIntelligence(
      db,
      {
        pluginId: record.id,
        version: record.version ?? 'local',
        pid: document,
        schemaVersion: typeof document['version'] === 'string' ? document['version'].slice(0, 20) : PID_SCHEMA_VERSION,
        contentHash: assessment.contentHash,
        validationStatus: assessment.status,
        validationScore: assessment.score,
        validationErrors: assessment.validation.errors,
        validationWarnings: assessment.validation.warnings,
        origin,
      },
      now(),
    );
    return (await findIntelligence(db, record.id))!;
  }

  return {
    add,

    async list(listOptions = {}) {
      const records = await listPluginRecords(db, { includeRemoved: listOptions.includeRemoved ?? false });
      return Promise.all(records.map(toPublic));
    },

    async show(reference) {
      const record = await requirePlugin(reference, db, { includeRemoved: true });
      const declared = new Set(parseCredentials(record.credentials).map((credential) => credential.name));
      const intelligence = await findIntelligence(db, record.id);
      const page = await catalog.listTools({ pluginId: record.id, limit: 1 });
      return {
        plugin: await toPublic(record),
        enablements: await listPluginEnablements(db, record.id),
        secrets: (await listSecrets(db, record.id)).map((row) => ({ key: row.key, declared: declared.has(row.key), updatedAt: row.updatedAt })),
        env: await listPluginEnv(db, record.id),
        stateDir: options.stateRoot === undefined ? null : pluginStateDir(options.stateRoot, record.id),
        toolCount: page.total,
        intelligence:
          intelligence === undefined
            ? null
            : { status: intelligence.validationStatus, origin: intelligence.origin, contentHash: intelligence.contentHash },
      };
    },

    async tools(reference) {
      return allTools((await requirePlugin(reference)).id);
    },

    async enable(reference, scope = {}) {
      const record = await requirePlugin(reference);
      const { workspace, project } = await resolveScope(scope);
      await setEnablement(db, { pluginId: record.id, workspaceId: workspace.id, projectId: project?.id ?? null, enabled: true });
    },

    async disable(reference, scope = {}) {
      const record = await requirePlugin(reference);
      const { workspace, project } = await resolveScope(scope);
      if (project === undefined) {
        // Workspace-wide: drop the workspace row; projects that enabled it themselves keep it.
        await clearEnablement(db, { pluginId: record.id, workspaceId: workspace.id });
      } else {
        // A project: an explicit opt-out, which also wins over a workspace-wide enablement.
        await setEnablement(db, { pluginId: record.id, workspaceId: workspace.id, projectId: project.id, enabled: false });
      }
    },

    async setStatus(reference, status) {
      const record = await requirePlugin(reference);
      if (record.status === 'failed') throw invalidInput(`plugin '${record.name}' failed to install; add it again`);
      await setPluginStatus(db, record.id, status, now());
      if (status === 'disabled') await supervisor.stop?.(record.id).catch(() => undefined);
      return toPublic(await requirePlugin(record.id));
    },

    update: (reference, overrides = {}) => reinstall(reference, 'update', overrides),
    sync: (reference) => reinstall(reference, 'sync'),

    async remove(reference) {
      const record = await requirePlugin(reference);
      // Through the catalog's sync, like every tool write: an empty list soft-deletes them all (versioned).
      await catalog.syncPlugin({ pluginId: record.name, version: record.version ?? 'removed', tools: [] });
      await db.transaction(async (tx) => {
        await deletePluginEnablements(tx, record.id);
        await deletePluginSecrets(tx, record.id);
        await deleteAllPluginEnv(tx, record.id);
        await setPluginStatus(tx, record.id, 'removed', now());
      });
      await supervisor.stop?.(record.id).catch(() => undefined);
      await releaseCache(record.source['cachePath'], record.source['inPlace'] === true, record.id);
      logger.info({ plugin: record.name }, 'plugin removed');
    },

    async effectiveTools(scope = {}) {
      const { workspace, project } = await resolveScope(scope);
      const ids = await effectivePluginIds(db, { workspaceId: workspace.id, projectId: project?.id ?? null });
      const tools: ToolRecord[] = [];
      for (const id of ids) tools.push(...(await allTools(id)));
      return tools;
    },

    async setSecret(reference, key, value) {
      const record = await requirePlugin(reference);
      const parsedKey = secretKeySchema.safeParse(key);
      if (!parsedKey.success) throw invalidInput(`invalid secret key '${key}': ${parsedKey.error.issues[0]?.message ?? ''}`);
      const plaintext = parseSecretValue(value);
      assertSecretAllowed(record.name, key, new Set((await listPluginEnv(db, record.id)).map((row) => row.key)));
      await upsertSecret(db, record.id, key, secrets.seal(plaintext, secretContext(record.id, key)), now());
      logger.info({ plugin: record.name, key }, 'plugin secret set');
      return { key, declared: parseCredentials(record.credentials).some((credential) => credential.name === key) };
    },

    async deleteSecret(reference, key) {
      const record = await requirePlugin(reference);
      return deleteSecret(db, record.id, key);
    },

    async setEnv(reference, key, value) {
      const record = await requirePlugin(reference);
      const secretKeys = new Set((await listSecrets(db, record.id)).map((row) => row.key));
      assertSettingAllowed(record.name, key, value, { credentials: parseCredentials(record.credentials), secretKeys });
      const at = now();
      await upsertPluginEnv(db, record.id, key, value, at);
      logger.info({ plugin: record.name, key }, 'plugin setting set');
      return { key, value, updatedAt: at };
    },

    async unsetEnv(reference, key) {
      const record = await requirePlugin(reference);
      return deletePluginEnv(db, record.id, key);
    },

    async listEnv(reference) {
      return listPluginEnv(db, (await requirePlugin(reference)).id);
    },

    async resolveLaunchEnv(reference) {
      const record = await requirePlugin(reference);
      const settings = Object.fromEntries((await listPluginEnv(db, record.id)).map((row) => [row.key, row.value]));
      const delivery = credentialDelivery(parseCredentials(record.credentials), await secretValues(record.id));
      if (delivery.missing.length > 0) {
        throw new QuiverError(
          'missing_credential',
          `plugin '${record.name}' cannot start: missing required credential${delivery.missing.length > 1 ? 's' : ''} ` +
            `${delivery.missing.map((m) => `'${m}'`).join(', ')}; set it with 'quiver plugin secret set ${record.name} ${delivery.missing[0]}'`,
          { kind: 'user', details: { plugin: record.name, missing: delivery.missing } },
        );
      }
      return { env: mergeLaunchEnv(settings, delivery.env), headers: delivery.headers };
    },

    async upstreamSpec(reference) {
      const record = await requirePlugin(reference);
      if (record.status !== 'active') throw new QuiverError(ErrorCodes.unavailable, `plugin '${record.name}' is ${record.status}`);
      if (record.launch === null) throw new QuiverError(ErrorCodes.unavailable, `plugin '${record.name}' has no launch (it registered itself through sync)`);
      const { env, headers } = await this.resolveLaunchEnv(record.id);
      const root = typeof record.source['cachePath'] === 'string' ? record.source['cachePath'] : undefined;
      const spec = buildUpstreamSpec({
        pluginId: record.id,
        pluginName: record.name,
        version: record.version ?? 'local',
        launch: record.launch as unknown as StoredLaunch,
        root,
        env,
        headers,
        readOnlyPaths: settings.readOnlyPaths,
        trustLevel: (record.trustLevel as TrustLevel | null) ?? trustLevel,
      });
      return parseUpstreamSpec(spec);
    },

    listWorkspaces: () => listWorkspaces(db),

    async createWorkspace(input) {
      const name = scopeNameSchema.safeParse(input.name);
      if (!name.success) throw invalidInput(`invalid workspace name '${input.name}': ${name.error.issues[0]?.message ?? ''}`);
      try {
        return await insertWorkspace(db, { name: name.data, displayName: input.displayName ?? null });
      } catch (error) {
        if (isUniqueViolation(error)) throw new QuiverError(ErrorCodes.conflict, `workspace '${input.name}' already exists`, { cause: error });
        throw error;
      }
    },

    async setWorkspaceExposureMode(workspaceName, mode) {
      if (!(await setWorkspaceExposureMode(db, workspaceName, mode))) throw notFound('workspace', workspaceName);
    },

    workspaceExposureModes: () => listWorkspaceExposureModes(db),

    async listProjects(workspaceName) {
      const { workspace } = await resolveScope({ workspace: workspaceName });
      return listProjects(db, workspace.id);
    },

    async createProject(workspaceName, input) {
      const { workspace } = await resolveScope({ workspace: workspaceName });
      const name = scopeNameSchema.safeParse(input.name);
      if (!name.success) throw invalidInput(`invalid project name '${input.name}': ${name.error.issues[0]?.message ?? ''}`);
      try {
        return await insertProject(db, { workspaceId: workspace.id, name: name.data, displayName: input.displayName ?? null });
      } catch (error) {
        if (isUniqueViolation(error)) throw new QuiverError(ErrorCodes.conflict, `project '${workspace.name}/${input.name}' already exists`, { cause: error });
        throw error;
      }
    },

    async getIntelligence(reference) {
      const record = await requirePlugin(reference);
      const document = await findIntelligence(db, record.id);
      if (document === undefined) throw notFound('intelligence document of plugin', record.name);
      return document;
    },

    async generateIntelligence(reference) {
      const record = await requirePlugin(reference);
      let manifest: PluginManifest | undefined;
      if (record.manifest !== null) manifest = validateManifest(record.manifest, { pluginName: record.name }).manifest;
      const document = generatePid({ pluginName: record.name, manifest, description: record.description, tools: await allTools(record.id) });
      return intelligenceFor(record, document, 'generated');
    },

    async putIntelligence(reference, document) {
      const record = await requirePlugin(reference);
      if (document === null || typeof document !== 'object' || Array.isArray(document)) throw invalidInput('an intelligence document is a JSON object');
      return intelligenceFor(record, document as Record<string, unknown>, 'admin');
    },

    exportIntelligence: () => listIntelligence(db),

    async searchIntelligence(query, limit = 10) {
      const documents = await listIntelligence(db);
      return lexicalSearch(
        documents.map((document) => ({ item: document, fields: pidSearchFields(document.pluginName, document.pid) })),
        PID_SEARCH_FIELDS,
        query,
        limit,
      ).map((hit) => ({ plugin: hit.item.pluginName, score: hit.score, document: hit.item }));
    },

    async importMarketplace(document, importOptions = {}) {
      const parsed = parseMarketplaceCatalog(document);
      const result = await upsertMarketplaceServers(
        db,
        parsed.servers.map((server) => ({
          name: server.name,
          title: server.title ?? null,
          description: server.description,
          version: server.version ?? null,
          server: server as Record<string, unknown>,
          source: importOptions.source ?? null,
        })),
        now(),
      );
      logger.info({ imported: parsed.servers.length, skipped: parsed.warnings.length }, 'marketplace imported');
      return { imported: parsed.servers.length, ...result, warnings: parsed.warnings };
    },

    listMarketplace: () => listMarketplaceServers(db),

    async searchMarketplace(query, limit = 10) {
      const entries = await listMarketplaceServers(db);
      const installed = new Map<string, string>();
      for (const plugin of await listPluginRecords(db, { includeRemoved: false })) {
        if (typeof plugin.source['marketplace'] === 'string') installed.set(plugin.source['marketplace'], plugin.name);
      }
      const hits = lexicalSearch(
        entries.map((entry) => ({ item: entry, fields: [entry.name, entry.title ?? '', entry.description] })),
        [
          { weight: 2, b: 0.3 },
          { weight: 2, b: 0.3 },
          { weight: 1, b: 0.75 },
        ],
        query,
        limit,
      );
      return hits.map(({ item, score }) => {
        let installable = true;
        try {
          installPlanFor(marketplaceServerSchema.parse(item.server));
        } catch {
          installable = false;
        }
        return {
          name: item.name,
          title: item.title,
          description: item.description,
          version: item.version,
          install: `market:${item.name}`,
          installable,
          installedAs: installed.get(item.name) ?? null,
          score,
        };
      });
    },
  };
}
