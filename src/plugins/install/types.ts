/**
 * @module plugins/install/types
 * What an install is given and what it produces: the settings every install shares, one
 * install request (its source already resolved), and the prepared install the service commits.
 */
import type { CredentialSpec, DiscoveredTool } from '../../core/plugin-metadata.ts';
import type { ToolInput } from '../../core/tool.ts';
import type { Discovery, Supervisor } from '../../runtime/supervisor.ts';
import type { TrustLevel } from '../../runtime/types.ts';
import type { PluginInstallFields } from '../../store/repositories/plugins.ts';
import type { SourceBuildSettings } from '../source-build.ts';
import type { PluginSource } from '../sources.ts';

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
  /** Checks a remote plugin's URL before install (the SSRF guard, issue #27); absent: none. */
  checkRemoteUrl?: ((url: URL) => Promise<void>) | undefined;
  /**
   * Fetches a document a source names by URL (an `openapi:` URL and its `$ref`s), under the same
   * SSRF guard as a remote plugin's URL; absent: that guard with its default (public addresses only).
   */
  fetchRemoteDocument?: typeof fetch | undefined;
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
  /** Host paths granted to it (issue #26): discovery runs with them, as every later start does. */
  mounts?: ReadonlyArray<{ path: string; mode: 'ro' | 'rw' }> | undefined;
  /** Re-discover an installed plugin from its cache folder instead of fetching again. */
  reuseCachePath?: string | undefined;
  /** The previous source record, when reusing (kept as is). */
  previousSource?: Record<string, unknown> | undefined;
  /** A remote plugin's discovery carries this owner's OAuth authorization ('user:bob'); absent: the hub's. */
  discoverAs?: string | undefined;
  /**
   * What the running process listed after announcing a changed tool list (issue #24), with the
   * version it runs: used instead of starting the plugin again when that is the version being
   * discovered, so a tool it added at runtime (only in its memory) is not missed.
   */
  announced?: { version: string; discovery: Discovery } | undefined;
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
  /** Every tool's definition as the server served it (tool pinning compares these, issue #10). */
  served: DiscoveredTool[];
  /** Per tool name, the client capabilities a 2026-07-28 plugin lists it for only (issue #24); absent: none. */
  clientRequirements?: Record<string, string[]> | undefined;
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

/** What fetching a source produced. */
export interface FetchedSource {
  /** The tree to read the plugin from (staged or final); absent for remote plugins. */
  root: string | undefined;
  /** Where the tree lives once placed; absent for remote plugins. */
  finalPath: string | undefined;
  /** The plugin's folder inside `root` (an npm package's folder, a monorepo package). */
  relativeFolder: string;
  /** True for folder sources: the user's own folder, never moved or deleted. */
  inPlace: boolean;
  sourceType: PluginInstallFields['sourceType'];
  /** What the plugin row records about its source. */
  sourceRecord: Record<string, unknown>;
  /** A git commit, short, appended to the version. */
  revision: string | undefined;
  /** The npm package version, when the metadata declares none. */
  packageVersion: string | undefined;
  warnings: string[];
}
