/**
 * @module plugins/service/versions
 * A new version of an installed plugin staged beside the one in use (issue #11, blue-green
 * slots, seed 000 §5.1): `stageVersion` fetches, builds and discovers it exactly as `update`
 * does and moves it into its own cache folder, but leaves the plugin row and the catalog alone;
 * `commitStagedVersion` later makes a staged version the installed one (the catalog moves to its
 * tools, pins screened, through commit.ts like any update) without fetching it again and
 * without stopping the running process, so calls in flight finish on the version they started on.
 */
import { invalidInput } from '../../core/errors.ts';
import { prepareInstall, type PreparedInstall } from '../installer.ts';
import { commitExisting, reportOf } from './commit.ts';
import type { PluginContext } from './context.ts';
import { requirePlugin, toPublic } from './records.ts';
import { requestOf, type ReinstallOverrides } from './reinstall.ts';
import type { InstallReport, StagedVersion } from './types.ts';

export type { StagedVersion } from './types.ts';

/** Fetches, builds and discovers a new version of a plugin into its own cache folder. */
export async function stageVersion(context: PluginContext, reference: string, overrides: ReinstallOverrides): Promise<StagedVersion> {
  const existing = await requirePlugin(context, reference);
  // A folder or URL plugin is re-discovered where it is (as `update` does): its "new version" is what is there now.
  if (overrides.ref !== undefined && existing.sourceType !== 'git') throw invalidInput('--ref only applies to plugins installed from git');
  if (overrides.version !== undefined && existing.sourceType !== 'npm' && existing.sourceType !== 'pypi') throw invalidInput('--version only applies to plugins installed from npm or the Python package index');
  const prepared = await prepareInstall(await requestOf(context, existing, 'update', overrides), context.installer);
  try {
    await prepared.place();
  } catch (error) {
    await prepared.discard();
    throw error;
  }
  const { fields, tools, categories, pageMappings, shippedPid, registeredTools, served, clientRequirements, warnings, cachePath, inPlace } = prepared;
  return JSON.parse(JSON.stringify({ fields, tools, categories, pageMappings, shippedPid, registeredTools, served, clientRequirements, warnings, cachePath, inPlace })) as StagedVersion;
}

/** Makes a staged version the installed one: plugin row, catalog (differential sync), pins, PID. */
export async function commitStagedVersion(context: PluginContext, reference: string, staged: StagedVersion): Promise<InstallReport> {
  const existing = await requirePlugin(context, reference);
  // Already in its folder: nothing to place, nothing to discard.
  const prepared: PreparedInstall = { ...staged, place: async () => false, discard: async () => undefined };
  const sync = await commitExisting(context, existing, prepared, { status: existing.status === 'disabled' ? 'disabled' : 'active' });
  context.changed({ kind: 'installation', pluginId: existing.id });
  const record = await requirePlugin(context, existing.id);
  context.logger.info({ plugin: record.name, version: record.version }, 'staged plugin version committed');
  return reportOf(await toPublic(context, record), prepared, sync);
}
