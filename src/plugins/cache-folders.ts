/**
 * @module plugins/cache-folders
 * Reusing and deleting the install cache's version folders (issue #29). An install that reuses
 * a folder touches it first, so the folder sweep (rollouts/sweep.ts) leaves a folder an install
 * is about to commit alone. Deleting an install folder so that a crash cannot leave half of it behind (issue #29): the
 * folder is first renamed into `<cacheDir>/.trash` (one atomic step on the same file system),
 * then removed there. A process killed in the middle leaves either the whole folder where it
 * was or a partial copy in the trash, never a half-deleted `git/<commit>` that a later install
 * would find and reuse as if complete. What is left in the trash is removed by the next sweep.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** The trash folder below a cache folder. */
export function trashDir(cacheDir: string): string {
  return join(cacheDir, '.trash');
}

/** Moves `folder` into the trash; returns where it went, or undefined when it was not there. */
export async function moveToTrash(cacheDir: string, folder: string): Promise<string | undefined> {
  const trash = trashDir(cacheDir);
  await mkdir(trash, { recursive: true });
  const target = join(trash, `${basename(folder)}-${randomBytes(6).toString('hex')}`);
  try {
    await rename(folder, target);
    return target;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Deletes a folder: rename into the trash, then remove (a crash between the two loses nothing in use). */
export async function deleteFolder(cacheDir: string, folder: string): Promise<boolean> {
  const moved = await moveToTrash(cacheDir, folder);
  if (moved === undefined) return false;
  await rm(moved, { recursive: true, force: true });
  return true;
}

/** Removes what an interrupted deletion left in the trash; returns how many entries. */
export async function emptyTrash(cacheDir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(trashDir(cacheDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  for (const entry of entries) await rm(join(trashDir(cacheDir), entry), { recursive: true, force: true });
  return entries.length;
}

/** True when `folder` exists as a folder (then it is reused): its time is touched first, so a sweep does not take it meanwhile. */
export async function reuseFolder(folder: string): Promise<boolean> {
  const isFolder = () => stat(folder).then((info) => info.isDirectory(), () => false);
  if (!(await isFolder())) return false;
  const now = new Date();
  await utimes(folder, now, now).catch(() => undefined);
  return isFolder();
}
