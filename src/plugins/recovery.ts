/**
 * @module plugins/recovery
 * Start-up crash recovery of plugin installs (issue #18 finding 8). An install killed with
 * `kill -9` leaves its reserved `failed` row (maybe with tools), its cache folder if it was
 * already moved into place, and its staging folder. At start-up each of them is rolled back
 * once its owning process is provably gone — on this host: dead, a zombie, or its pid reused
 * (store/process-owner.ts); on another host (replicas sharing PostgreSQL): its lease has run
 * out. A live replica's install is never touched. Every step is idempotent and conditional on
 * what was read, so several replicas may recover at once.
 */
import { readFile, readdir, rm, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import { ownerState, processOwnerSchema } from '../store/process-owner.ts';
import { deleteInstallReservation, listInstallReservations, type InstallReservation } from '../store/repositories/plugin-install-leases.ts';
import { pluginsUsingCachePath } from '../store/repositories/plugins.ts';
import { STAGING_OWNER_FILE } from './installer.ts';

/** How long an install's lease lasts; it is renewed every third of it while the install runs. */
export const INSTALL_LEASE_SECONDS = 60;

/** A staging folder without an owner file (left by an older version) is stale after this long. */
const UNOWNED_STAGING_GRACE_MS = 10 * 60 * 1000;

/** True when the install holding `reservation` can no longer finish: its owner is gone or its lease ran out. */
export function installAbandoned(reservation: InstallReservation): boolean {
  if (reservation.owner === null) return reservation.expired;
  const state = ownerState(reservation.owner);
  return state === 'dead' || (state === 'elsewhere' && reservation.expired);
}

/** Options of `recoverInterruptedInstalls`. */
export interface RecoveryOptions {
  db: Database;
  /** The plugin cache root (`<home>/plugins`). */
  cacheDir: string;
  /** The supervisor's state root (`<home>/state`), where older versions left `installing-<uuid>` folders. */
  stateRoot?: string | undefined;
  logger: Logger;
}

/** What a recovery rolled back. */
export interface RecoveryReport {
  /** Names of the plugin rows deleted. */
  plugins: string[];
  /** Folders removed (cache, staging, discovery state). */
  folders: string[];
}

async function entries(folder: string): Promise<string[]> {
  try {
    return await readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function stagingAbandoned(folder: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(join(folder, STAGING_OWNER_FILE), 'utf8');
  } catch {
    const info = await stat(folder).catch(() => undefined);
    return info !== undefined && Date.now() - info.mtimeMs > UNOWNED_STAGING_GRACE_MS;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return true;
  }
  const owner = processOwnerSchema.safeParse(raw);
  // Another host's staging folder in a shared cache cannot be judged from here: left alone.
  return !owner.success || ownerState(owner.data) === 'dead';
}

/** Rolls back the installs interrupted by a crash: their rows, cache, staging and discovery folders. */
export async function recoverInterruptedInstalls(options: RecoveryOptions): Promise<RecoveryReport> {
  const { db, cacheDir, logger } = options;
  const report: RecoveryReport = { plugins: [], folders: [] };

  for (const reservation of await listInstallReservations(db, INSTALL_LEASE_SECONDS)) {
    if (!installAbandoned(reservation)) continue;
    // Conditional on the owner read: a new install that claimed the row meanwhile keeps it.
    if (!(await deleteInstallReservation(db, reservation.id, reservation.rawOwner))) continue;
    report.plugins.push(reservation.name);
    logger.warn({ plugin: reservation.name, owner: reservation.owner }, 'rolled back an install interrupted by a crash');
    const cachePath = reservation.source['cachePath'];
    if (
      typeof cachePath === 'string' &&
      reservation.source['inPlace'] !== true &&
      cachePath.startsWith(`${cacheDir}${sep}`) &&
      (await pluginsUsingCachePath(db, cachePath, null)).length === 0
    ) {
      await rm(cachePath, { recursive: true, force: true });
      report.folders.push(cachePath);
    }
  }

  const stagingRoot = join(cacheDir, '.staging');
  for (const name of await entries(stagingRoot)) {
    const folder = join(stagingRoot, name);
    if (!(await stagingAbandoned(folder))) continue;
    await rm(folder, { recursive: true, force: true });
    report.folders.push(folder);
  }

  if (options.stateRoot !== undefined) {
    // Discovery state now lives in the staging folder; these are only left by older versions.
    for (const name of await entries(options.stateRoot)) {
      if (!name.startsWith('installing-')) continue;
      const folder = join(options.stateRoot, name);
      await rm(folder, { recursive: true, force: true });
      report.folders.push(folder);
    }
  }
  if (report.folders.length > 0) logger.info({ folders: report.folders }, 'removed folders left by interrupted installs');
  return report;
}
