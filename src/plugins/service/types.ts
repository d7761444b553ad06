/**
 * @module plugins/service/types
 * The public shape of the plugins service: its options, what its methods take and return,
 * and the change events it emits after every committed write (the caches subscribe to them).
 * The parts in this folder each implement a slice of `PluginService`; `index.ts` assembles them.
 */
import type { PluginInstallFields } from '../../store/repositories/plugins.ts';
import type { PreparedInstall } from '../installer.ts';
import type { CredentialSpec } from '../../core/plugin-metadata.ts';
import type { ToolRecord } from '../../core/tool.ts';
import type { CatalogService } from '../../catalog/service.ts';
import type { PinningService } from '../../trust/pinning/index.ts';
import type { Logger } from '../../core/logger.ts';
import type { EffectiveExecution } from '../../runtime/execution-profile.ts';
import type { Discovery, Supervisor } from '../../runtime/supervisor.ts';
import type { TrustLevel, UpstreamSpec } from '../../runtime/types.ts';
import type { Database } from '../../store/database.ts';
import type { MarketplaceRecord } from '../../store/repositories/marketplace.ts';
import type { IntelligenceRecord, PluginRecord } from '../../store/repositories/plugins.ts';
import type { ProjectRecord, WorkspaceRecord } from '../../store/repositories/workspaces.ts';
import type { SecretBox } from '../secret-box.ts';
import { DEFAULT_WORKSPACE } from '../../core/names.ts';

/** The workspace a plugin is enabled in when none is named. */
export { DEFAULT_WORKSPACE };

/**
 * What a committed write changed. Every kind can change which tools are in effect or how a
 * plugin starts, so the selection caches and the gateway's cached launch specs drop what they hold.
 */
export type PluginChangeKind = 'installation' | 'status' | 'enablement' | 'exposure' | 'secrets' | 'settings' | 'mounts';

/** Emitted by the plugins service once a write has committed. */
export interface PluginChangeEvent {
  kind: PluginChangeKind;
  /** The plugin the write was about (absent for workspace-wide changes such as exposure). */
  pluginId?: string;
  /** The workspace, for exposure changes. */
  workspace?: string;
}

/** Options of `createPluginService`. */
export interface PluginServiceOptions {
  db: Database;
  /** The catalog: every plugin tool enters through `syncPlugin` (seed 001 §9). */
  catalog: Pick<CatalogService, 'syncPlugin' | 'listTools'>;
  /** The runtime: `discover` for install-time discovery; `stop` to retire old processes. */
  supervisor: Pick<Supervisor, 'discover'> & Partial<Pick<Supervisor, 'stop' | 'host'>>;
  /** The plugin cache root (`<home>/plugins`): `git/<commit>`, `npm/<package>@<version>`, `.staging`. */
  cacheDir: string;
  /** Checks a remote plugin's URL before it is installed (the SSRF guard, issue #27: throws when its host is a refused address); absent: none. */
  checkRemoteUrl?: ((url: URL) => Promise<void>) | undefined;
  /** Fetches a document an `openapi:` URL source names, under the same guard; absent: the guard's default (public addresses only). */
  fetchRemoteDocument?: typeof fetch | undefined;
  /** Seals credentials at rest (`createSecretBox(loadSecretKey(…).key)`). */
  secrets: SecretBox;
  logger?: Logger;
  clock?: () => Date;
  /**
   * Called after each committed write that changes installation, status, enablement, exposure,
   * secrets or settings. A throwing subscriber is logged and never undoes the write.
   */
  onChange?: (event: PluginChangeEvent) => void;
  /**
   * The trust a plugin starts with and its egress allow-list (issue #10, trust service); absent,
   * the verified level (or the default) and no allow-list.
   */
  launchTrust?: ((pluginId: string) => Promise<{ trustLevel: TrustLevel; egress: Array<{ host: string; port: number }> | undefined }>) | undefined;
  /** Tool pinning (issue #10): screens every listing; absent, tools are synced as served. */
  pinning?: Pick<PinningService, 'screen' | 'apply' | 'committed'> | undefined;
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
  /**
   * The hub's own paths no host-path grant may be, hold or sit inside (issue #26): its home,
   * data folder and secret key file. The plugin cache and state root are always added.
   */
  protectedPaths?: readonly string[];
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
  /** `openapi:` sources: the API root operations are called on (default: the document's first absolute server URL). */
  baseUrl?: string | undefined;
  /** Run npm lifecycle scripts for this package. */
  trusted?: boolean | undefined;
  /** Host paths to grant (issue #26), in effect from install-time discovery on. */
  mounts?: ReadonlyArray<{ path: string; mode: 'ro' | 'rw' }> | undefined;
  /** Who grants them (recorded with each; default `cli`) and why. */
  mountActor?: string | undefined;
  mountReason?: string | undefined;
}

/** A host path granted to a plugin, with who granted it and when. */
export interface PluginMount {
  path: string;
  mode: 'ro' | 'rw';
  reason: string;
  actor: string;
  createdAt: Date;
}

/** A scope given by names. */
export interface ScopeInput {
  workspace?: string | undefined;
  project?: string | undefined;
}

/** Options of `sync`. */
export interface SyncOptions {
  /** Keep the running process (a sync following its own tools/list_changed, issue #24). */
  keepRunning?: boolean;
  /** The OAuth owner ('user:bob') a remote plugin's discovery acts as (default the hub). */
  discoverAs?: string;
  /**
   * What the running process that announced a changed tool list serves now, with its version
   * (issue #24): the sync diffs this against the catalog (same pinning screen) instead of
   * starting a fresh process, which would miss a tool added at runtime. A listing of another
   * version than the installed one is ignored (fresh discovery).
   */
  announced?: { version: string; discovery: Discovery };
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
  /** The execution profile its calls run with (PID, else defaults; issue #11); null when the stored PID's cannot be applied. */
  execution: EffectiveExecution | null;
  /** Host paths granted to it (issue #26). */
  mounts: PluginMount[];
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
  /**
   * Re-discovers from the installed folder (no fetch) with a fresh process and re-syncs; the
   * running process is stopped unless `keepRunning`. See `SyncOptions`.
   */
  sync(plugin: string, options?: SyncOptions): Promise<InstallReport>;
  /** Fetches, builds and discovers a new version into its own folder without installing it (issue #11: a blue-green slot). */
  stageVersion(plugin: string, options?: { ref?: string | undefined; version?: string | undefined }): Promise<StagedVersion>;
  /** Makes a staged version the installed one (catalog moves to its tools); the running process is not stopped. */
  commitStagedVersion(plugin: string, staged: StagedVersion): Promise<InstallReport>;
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
  /**
   * Grants a host path, read-only or read-write (issue #26); refused for the hub's own paths.
   * The plugin starts with it at its next call (`restart`: its processes are stopped now).
   */
  grantMount(plugin: string, grant: { path: string; mode: 'ro' | 'rw'; actor: string; reason?: string | undefined; restart?: boolean | undefined }): Promise<{ mount: PluginMount; created: boolean; warnings: string[] }>;
  /** Withdraws a grant; false when the path was not granted. */
  revokeMount(plugin: string, path: string, options?: { restart?: boolean | undefined }): Promise<boolean>;
  /** The host paths granted to a plugin. */
  listMounts(plugin: string): Promise<PluginMount[]>;
  /** The runtime spec of an installed plugin, credentials included (hand it to the supervisor only). */
  upstreamSpec(plugin: string): Promise<UpstreamSpec>;
  listWorkspaces(): Promise<WorkspaceRecord[]>;
  createWorkspace(input: { name: string; displayName?: string | undefined }): Promise<WorkspaceRecord>;
  /** Sets the MCP exposure mode (`search`, `still`, `capabilities`, `all`) of a workspace; null restores the default. */
  setWorkspaceExposureMode(workspace: string, mode: 'search' | 'still' | 'capabilities' | 'all' | null): Promise<void>;
  /** Exposure modes set per workspace, keyed by workspace id and name. */
  workspaceExposureModes(): Promise<Map<string, string>>;
  /** Turns native names on or off for a workspace's MCP sessions (issue #12: plugins' own names where unambiguous). */
  setWorkspaceNativeNames(workspace: string, on: boolean): Promise<void>;
  /** Workspaces with native names on, by id and name. */
  workspaceNativeNames(): Promise<Set<string>>;
  listProjects(workspace: string): Promise<ProjectRecord[]>;
  createProject(workspace: string, input: { name: string; displayName?: string | undefined }): Promise<ProjectRecord>;
  getIntelligence(plugin: string): Promise<IntelligenceRecord>;
  /** Generates a PID from the catalog's tools and the manifest, stores it and returns it. */
  generateIntelligence(plugin: string): Promise<IntelligenceRecord>;
  /** Validates and stores an admin-written PID; hard errors reject it with the full list. */
  putIntelligence(plugin: string, document: unknown): Promise<IntelligenceRecord>;
  exportIntelligence(): Promise<IntelligenceRecord[]>;
  /**
   * Called after a PID was stored outside this service (an accepted generation): when its
   * execution profile differs from `previous`, cached launch specs are rebuilt, as after a PUT.
   */
  intelligenceStored(plugin: string, previous: IntelligenceRecord | undefined): Promise<void>;
  searchIntelligence(query: string, limit?: number): Promise<Array<{ plugin: string; score: number; document: IntelligenceRecord }>>;
  /** Imports a catalog in MCP Registry server.json format (one, an array, or `{servers}`). */
  importMarketplace(document: unknown, options?: { source?: string }): Promise<{ imported: number; inserted: number; updated: number; warnings: string[] }>;
  listMarketplace(): Promise<MarketplaceRecord[]>;
  /** Lexical search over marketplace names, titles and descriptions: installable suggestions. */
  searchMarketplace(query: string, limit?: number): Promise<MarketplaceHit[]>;
}

/** A version prepared in its own cache folder, as stored with a deployment (plain JSON). */
export interface StagedVersion {
  fields: PluginInstallFields;
  tools: PreparedInstall['tools'];
  categories: PreparedInstall['categories'];
  pageMappings: PreparedInstall['pageMappings'];
  shippedPid: PreparedInstall['shippedPid'];
  registeredTools: string[];
  served: PreparedInstall['served'];
  /** Absent in versions staged before issue #24's capability listing: no tool needs any. */
  clientRequirements?: PreparedInstall['clientRequirements'];
  warnings: string[];
  cachePath: string | undefined;
  inPlace: boolean;
}
