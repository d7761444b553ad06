/**
 * @module plugins/service/reinstall
 * `update` and `sync` of an installed plugin. Update fetches again (a new git ref or npm
 * version); sync, and update of a folder or URL plugin, re-discovers what is installed. Both
 * keep the plugin's secrets, its header and marketplace credentials and its launch options, and
 * commit over the existing row (commit.ts), which restores the old install if the sync fails.
 * The old cache folder goes only once the new one is in use, and the old process is stopped.
 */
import { invalidInput } from '../../core/errors.ts';
import type { PluginRecord } from '../../store/repositories/plugins.ts';
import { prepareInstall, type InstallRequest } from '../installer.ts';
import { commitExisting, releaseCache, reportOf } from './commit.ts';
import type { PluginContext } from './context.ts';
import { mountsOf } from './mounts.ts';
import { parseCredentials, requirePlugin, toPublic } from './records.ts';
import { secretValues } from './secret-values.ts';
import type { InstallReport, SyncOptions } from './types.ts';

/** A new git ref or npm version for `update`. */
export interface ReinstallOverrides {
  ref?: string | undefined;
  version?: string | undefined;
}

/** The source an installed plugin is fetched from again. */
function sourceOf(record: PluginRecord, overrides: ReinstallOverrides): InstallRequest['source'] {
  const source = record.source;
  switch (record.sourceType) {
    case 'git':
      return { kind: 'git', url: String(source['url']) };
    case 'npm': {
      const packageName = String(source['packageName'] ?? source['spec']);
      return { kind: 'npm', spec: overrides.version !== undefined ? `${packageName}@${overrides.version}` : String(source['spec']) };
    }
    case 'pypi': {
      const name = String(source['packageName'] ?? source['requirement']);
      return { kind: 'pypi', name, requirement: overrides.version !== undefined ? `${name}==${overrides.version}` : String(source['requirement'] ?? name) };
    }
    case 'path':
      return { kind: 'path', path: String(source['path']) };
    case 'url':
      return { kind: 'url', url: String(source['url']) };
    case 'openapi':
      return { kind: 'openapi', location: String(source['location']), baseUrl: String(source['baseUrl']) };
    case 'container':
      return { kind: 'container', image: String(source['image']) };
    default:
      throw invalidInput(`plugin '${record.name}' registered itself through the sync API; it has no source to install from`);
  }
}

/** The install request that repeats an installed plugin's install (with the overrides); rollouts stage a version with it (versions.ts). */
export async function requestOf(context: PluginContext, existing: PluginRecord, mode: 'update' | 'sync', overrides: ReinstallOverrides): Promise<InstallRequest> {
  const previousSource = existing.source;
  // update refetches from the remote; sync (and update of a folder or URL) re-discovers what is installed.
  // A Python folder runs from its copy in the cache (folderHash, issue #26): update copies the folder again.
  const copiedFolder = existing.sourceType === 'path' && typeof previousSource['folderHash'] === 'string';
  const refetch = mode === 'update' && (existing.sourceType === 'git' || existing.sourceType === 'npm' || existing.sourceType === 'openapi' || existing.sourceType === 'pypi' || existing.sourceType === 'container' || copiedFolder);
  return {
    source: sourceOf(existing, overrides),
    name: existing.name,
    pluginId: existing.id,
    ref: overrides.ref ?? (typeof previousSource['ref'] === 'string' ? previousSource['ref'] : undefined),
    subfolder: existing.sourceType === 'git' && typeof previousSource['packageFolder'] === 'string' ? previousSource['packageFolder'] : undefined,
    args: Array.isArray(previousSource['args']) ? (previousSource['args'] as string[]) : [],
    bin: typeof previousSource['bin'] === 'string' ? previousSource['bin'] : undefined,
    trusted: previousSource['trusted'] === true,
    secretValues: await secretValues(context, existing.id),
    // Header and marketplace credentials are not in quiver.json: keep the declarations.
    extraCredentials: parseCredentials(existing.credentials),
    sourceExtras: typeof previousSource['marketplace'] === 'string' ? { marketplace: previousSource['marketplace'] } : {},
    mounts: await mountsOf(context, existing.id),
    reuseCachePath: refetch ? undefined : typeof previousSource['cachePath'] === 'string' ? previousSource['cachePath'] : undefined,
    previousSource,
  };
}

/** Re-installs a plugin: `update` (fetch again) or `sync` (re-discover what is installed). */
export async function reinstallPlugin(context: PluginContext, reference: string, mode: 'update' | 'sync', overrides: ReinstallOverrides = {}, options: SyncOptions = {}): Promise<InstallReport> {
  const existing = await requirePlugin(context, reference);
  if (overrides.ref !== undefined && existing.sourceType !== 'git') throw invalidInput('--ref only applies to plugins installed from git');
  if (overrides.version !== undefined && existing.sourceType !== 'npm' && existing.sourceType !== 'pypi') throw invalidInput('--version only applies to plugins installed from npm or the Python package index');
  const previousSource = existing.source;
  const prepared = await prepareInstall({
    ...(await requestOf(context, existing, mode, overrides)),
    ...(options.discoverAs === undefined ? {} : { discoverAs: options.discoverAs }),
    ...(options.announced === undefined ? {} : { announced: options.announced }),
  }, context.installer);
  // A remote plugin installed before its authorization (issue #27) meets its tools now: that is its first discovery (pins them as served).
  const firstDiscovery = previousSource['needsAuthorization'] === true;
  const sync = await commitExisting(context, existing, prepared, { status: existing.status === 'disabled' ? 'disabled' : 'active', firstDiscovery });
  try {
    const oldCache = previousSource['cachePath'];
    if (oldCache !== prepared.cachePath) await releaseCache(context, oldCache, previousSource['inPlace'] === true, null);
    // A sync that follows the running process's own tools/list_changed keeps that process (issue #24).
    if (options.keepRunning !== true) await context.supervisor.stop?.(existing.id).catch(() => undefined);
  } finally {
    // After the old process is stopped, so the next call starts the new install.
    context.changed({ kind: 'installation', pluginId: existing.id });
  }
  const record = await requirePlugin(context, existing.id);
  context.logger.info({ plugin: record.name, mode, version: record.version }, 'plugin re-installed');
  return reportOf(await toPublic(context, record), prepared, sync);
}
