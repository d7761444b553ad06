/**
 * @module plugins/installer
 * The filesystem and discovery half of an install (seed 003 "Plugin Registration & Caching",
 * DESIGN §3.5), as a short sequence of steps each in its own file under `install/`:
 * 1. fetch the source into a staging folder (fetch.ts, per source kind; staging.ts),
 * 2. read quiver.json / package.json and check their shape (metadata.ts),
 * 3. work out the launch (metadata.ts),
 * 4. the credentials and how they are delivered (credentials.ts),
 * 5. start the server once in the sandbox to list its tools, resources and prompts (discovery.ts),
 * 6-7. validate the metadata against what the server really registers and build the catalog
 *    tool inputs and install fields (catalog-entry.ts).
 * Nothing here touches the database; the service commits the result (service/commit.ts).
 *
 * Every failure becomes `install_failed` with `details.step` naming the step that failed
 * (`clone`, `checkout`, `npm-install`, `launch`, `discovery`, `validation`, `sync`; failure.ts)
 * and the staging folder is removed, so a failed install leaves nothing behind.
 */
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCatalogEntry } from './install/catalog-entry.ts';
import { declaredCredentials, installDelivery } from './install/credentials.ts';
import { discoverPlugin } from './install/discovery.ts';
import { installFailure } from './install/failure.ts';
import { fetchSource } from './install/fetch.ts';
import { pluginVersion, readPluginFiles, resolvePluginLaunch } from './install/metadata.ts';
import { createStaging, type Staging } from './install/staging.ts';
import type { InstallerSettings, InstallRequest, PreparedInstall } from './install/types.ts';

export { installFailed, type InstallStep } from './install/failure.ts';
export { STAGING_OWNER_FILE } from './install/staging.ts';
export { credentialDelivery } from './install/credentials.ts';
export { buildUpstreamSpec, folderBlockingSandbox } from './install/spec.ts';
export type { InstallerSettings, InstallRequest, PluginDiscoverer, PreparedInstall } from './install/types.ts';

/** Moves the staged tree to its final folder; true when this install created that folder. */
async function placeStaged(staging: Staging, root: string | undefined, finalPath: string | undefined): Promise<boolean> {
  const stagedTree = staging.path === undefined ? undefined : join(staging.path, 'tree');
  if (stagedTree === undefined || finalPath === undefined || root === finalPath) {
    await staging.discard();
    return false;
  }
  await mkdir(join(finalPath, '..'), { recursive: true });
  try {
    await rename(stagedTree, finalPath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Another install of the same commit / version won the race: use its folder.
    if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
    await staging.discard();
    return false;
  }
  await staging.discard();
  return true;
}

/** Fetches, inspects and discovers a plugin. The caller commits the result or calls `discard()`. */
export async function prepareInstall(request: InstallRequest, settings: InstallerSettings): Promise<PreparedInstall> {
  const { fail, redact } = installFailure(request.name, Object.values(request.secretValues));
  const staging = createStaging(settings.cacheDir);
  try {
    const fetched = await fetchSource({ request, settings, staging, fail });
    const files = await readPluginFiles(fetched, request.name, fail);
    const launch = await resolvePluginLaunch(request, fetched, files, fail);
    const credentials = declaredCredentials(files.fileObject, request.extraCredentials);
    const delivery = installDelivery(request.name, credentials, request.secretValues, fail);
    const version = pluginVersion(request, fetched, files);
    const discovered = await discoverPlugin({ request, settings, staging, fail, version, launch, root: fetched.root, delivery });
    const entry = buildCatalogEntry({ request, fetched, files, launch, version, credentials, discovered, fail, redact });
    return {
      ...entry,
      inPlace: fetched.inPlace,
      place: () => placeStaged(staging, fetched.root, fetched.finalPath),
      discard: () => staging.discard(),
    };
  } catch (error) {
    await staging.discard();
    throw error;
  }
}
