/**
 * @module rollouts/sweep
 * The folder sweep (issue #29): deletes a version's install folder once nothing uses it. It runs
 * as a periodic job (`rollouts.sweep-folders`, jobs/schedule.ts), so one replica at a time owns
 * a run. Every folder is accounted for: the universe is what is on disk under the cache's
 * `git/` and `npm/` plus every folder the database names, so a folder no row remembers any more
 * (the first version's, an overwritten slot's, a removed plugin's) is found too.
 *
 * A folder stays while any of these holds (folder-usage.ts): an installed plugin uses it; an
 * active or canary slot, or either slot of an open rollout, runs from it; an idle or failed slot
 * left service less than `folderRetentionMs` ago; a process of one of its versions runs on this
 * replica; one of its versions was called within `recentCallMs` on any replica (a process of
 * another replica lives until its idle timeout); an install placed or reused it within
 * `recentCallMs` (it may be about to commit it).
 *
 * Crash safety: check, then rename into `<cache>/.trash` (atomic), check the database again and
 * put it back if an install committed it meanwhile, then remove it from the trash. A process
 * killed at any point leaves every folder in use whole where it was; what it left in the trash
 * was already judged unused and is removed at the start of the next run.
 */
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { emptyTrash, moveToTrash } from '../plugins/cache-folders.ts';
import type { RolloutContext } from './context.ts';
import { folderReferences, keepReasons, labelKey, recentlyCalledLabels, type FolderReference } from './folder-usage.ts';
import { reconcileAll } from './reconcile.ts';
import { insertRolloutEvent, latestRolloutOf } from './repository.ts';

/** The job kind of the sweep. */
export const FOLDER_SWEEP_JOB = 'rollouts.sweep-folders';

/** The cache kinds whose folders are versions of plugins (`<cache>/<kind>/<name>`). */
const VERSION_KINDS = ['git', 'npm'] as const;

/** What one sweep did. */
export interface SweepReport {
  removed: Array<{ folder: string; plugins: string[] }>;
  kept: Array<{ folder: string; reasons: string[] }>;
  /** Entries an interrupted earlier run left in the trash, now removed. */
  trashEmptied: number;
  /** Slot rows brought in line with the plugin rows first (reconcile.ts). */
  reconciled: string[];
}

/** Test and tooling seams of one run. */
export interface SweepOptions {
  signal?: AbortSignal | undefined;
  /** Called after a folder was moved into the trash and before it is removed there. */
  afterMove?: ((folder: string, trashed: string) => Promise<void>) | undefined;
}

/** True for `<cacheDir>/<kind>/<name>` with a plain kind: the only shape the sweep deletes (fail closed). */
export function isVersionFolder(cacheDir: string, folder: string): boolean {
  if (!isAbsolute(folder)) return false;
  const parts = relative(resolve(cacheDir), resolve(folder)).split(sep);
  return parts.length === 2 && parts.every((part) => part !== '' && part !== '..' && !part.startsWith('.'));
}

async function listVersionFolders(cacheDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const kind of VERSION_KINDS) {
    const entries = await readdir(join(cacheDir, kind), { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    for (const entry of entries) if (entry.isDirectory()) found.push(join(cacheDir, kind, entry.name));
  }
  return found;
}

/** When an install last placed or reused the folder (rename and touch move ctime or mtime); undefined when gone. */
async function touchedAt(folder: string): Promise<number | undefined> {
  const info = await stat(folder).catch(() => undefined);
  return info === undefined ? undefined : Math.max(info.mtimeMs, info.ctimeMs);
}

/** Runs one sweep: reconcile slot rows, empty the trash, delete every version folder nothing uses. */
export async function sweepFolders(context: RolloutContext, options: SweepOptions = {}): Promise<SweepReport> {
  const report: SweepReport = { removed: [], kept: [], trashEmptied: 0, reconciled: [] };
  const cacheDir = context.cacheDir;
  if (cacheDir === undefined) return report;
  report.trashEmptied = await emptyTrash(cacheDir);
  report.reconciled = await reconcileAll(context);
  const now = context.now();
  const { folderRetentionMs, recentCallMs } = context.settings;
  const references = await folderReferences(context.db, now, folderRetentionMs);
  const running = new Set(context.supervisor.processes().map((process) => labelKey(process.pluginId, process.version)));
  const recentlyCalled = await recentlyCalledLabels(context.db, new Date(now.getTime() - recentCallMs));
  const candidates = new Set(await listVersionFolders(cacheDir));
  for (const folder of references.keys()) if (isVersionFolder(cacheDir, folder)) candidates.add(folder);

  for (const folder of [...candidates].sort()) {
    options.signal?.throwIfAborted();
    const touched = await touchedAt(folder);
    if (touched === undefined) continue;
    const known = references.get(folder) ?? [];
    const reasons = keepReasons(known, { running, recentlyCalled, touchedRecently: now.getTime() - touched < recentCallMs });
    if (reasons.length > 0) {
      report.kept.push({ folder, reasons });
      continue;
    }
    const trashed = await moveToTrash(cacheDir, folder);
    if (trashed === undefined) continue;
    // An install may have committed the folder between the first look and the move: look again.
    const again = keepReasons((await folderReferences(context.db, context.now(), folderRetentionMs)).get(folder) ?? [], { running, recentlyCalled, touchedRecently: false });
    if (again.length > 0) {
      // Put back; if an install placed the same commit there meanwhile, its copy is the one in use.
      await rename(trashed, folder).catch(() => rm(trashed, { recursive: true, force: true }));
      report.kept.push({ folder, reasons: again });
      continue;
    }
    await options.afterMove?.(folder, trashed);
    await rm(trashed, { recursive: true, force: true });
    report.removed.push({ folder, plugins: [...new Set(known.map((reference) => reference.pluginId))] });
    await recordRemoval(context, folder, known);
  }
  if (report.removed.length > 0) context.logger.info({ removed: report.removed.map((entry) => entry.folder), kept: report.kept.length }, 'rollouts: unused version folders deleted');
  return report;
}

/** A history line for each plugin whose rollouts knew the folder (the accounting of issue #29). */
async function recordRemoval(context: RolloutContext, folder: string, known: readonly FolderReference[]): Promise<void> {
  for (const pluginId of new Set(known.map((reference) => reference.pluginId))) {
    const latest = await latestRolloutOf(context.db, pluginId);
    if (latest === undefined) continue;
    const labels = [...new Set(known.filter((reference) => reference.pluginId === pluginId).flatMap((reference) => reference.labels))];
    await insertRolloutEvent(
      context.db,
      { rolloutId: latest.id, pluginId, kind: 'folder', message: `deleted ${folder} (${labels.join(', ')}): nothing uses it any more`, details: { action: 'removed', folder, labels } },
      context.now(),
    );
  }
}
