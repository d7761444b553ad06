/**
 * @module plugins/service
 * The plugins service (DESIGN §3.5, seed 003), assembled from parts with one job each:
 * install (`add`, install.ts: reservation.ts claims the row, installer.ts prepares in staging,
 * commit.ts commits), re-install (`update`/`sync`, reinstall.ts), the installed plugins as a
 * whole (lifecycle.ts: list, show, status, remove), workspaces, projects and enablement
 * (enablement.ts), secrets, settings and the launch spec (launch-env.ts), Plugin Intelligence
 * Documents (intelligence.ts, seed 000 §6.3) and the marketplace catalog (marketplace.ts).
 *
 * Atomic install. The plugin row is reserved first, as `failed` (never served) with this
 * process's lease (migration 0033), so the name is claimed before anything is fetched. The
 * filesystem work and discovery happen in a staging folder; then the install fields are
 * written, the folder is moved into place, the catalog syncs its tools (its own transaction,
 * seed 001 §9 — the one path for plugin tools), and one transaction makes the row `active`,
 * clears the lease and writes enablement, secrets and the shipped PID. Any failure deletes the
 * row (tools, versions, enablements and secrets cascade) and the cache folder this install
 * created; a crash leaves a leased row that start-up recovery (`recovery.ts`) rolls back once
 * its process is gone. An update writes the new install fields first and restores the old ones
 * if the sync fails; the old cache folder is removed only after the new one is in use.
 *
 * Every committed write that changes installation, status, enablement, exposure, secrets or
 * settings calls `onChange` (context.ts), so the caches above follow the writes themselves.
 *
 * @example
 * const plugins = createPluginService({ db, catalog, supervisor, cacheDir: join(home, 'plugins'), secrets, onChange });
 * await plugins.add('npm:@modelcontextprotocol/server-memory');
 * const tools = await plugins.effectiveTools({ workspace: 'default' });
 */
import { createPluginContext } from './context.ts';
import { createEnablementPart } from './enablement.ts';
import { addPlugin } from './install.ts';
import { createIntelligencePart } from './intelligence.ts';
import { createLaunchEnvPart } from './launch-env.ts';
import { createLifecyclePart } from './lifecycle.ts';
import { createMarketplacePart } from './marketplace.ts';
import { createMountsPart } from './mounts.ts';
import { reinstallPlugin } from './reinstall.ts';
import { commitStagedVersion, stageVersion } from './versions.ts';
import type { PluginService, PluginServiceOptions } from './types.ts';

export * from './types.ts';
export type { StagedVersion } from './versions.ts';

/** Creates the plugins service. */
export function createPluginService(options: PluginServiceOptions): PluginService {
  const context = createPluginContext(options);
  return Object.freeze({
    add: (source, addOptions) => addPlugin(context, source, addOptions),
    update: (reference, overrides = {}) => reinstallPlugin(context, reference, 'update', overrides),
    sync: (reference, options) => reinstallPlugin(context, reference, 'sync', {}, options),
    stageVersion: (reference, overrides = {}) => stageVersion(context, reference, overrides),
    commitStagedVersion: (reference, staged) => commitStagedVersion(context, reference, staged),
    ...createLifecyclePart(context),
    ...createEnablementPart(context),
    ...createLaunchEnvPart(context),
    ...createIntelligencePart(context),
    ...createMarketplacePart(context),
    ...createMountsPart(context),
  } satisfies PluginService);
}
