/**
 * @module rollouts/disk-use
 * How much disk a plugin's install folders take (issue #29, `quiver plugin show`): the apparent
 * size of every entry below each folder (files, folders, links themselves), each inode counted
 * once across all of them, as `du -sb` counts. A folder that is gone counts 0 and says so.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** One folder's size. */
export interface FolderSize {
  path: string;
  bytes: number;
  exists: boolean;
}

async function walk(path: string, seen: Set<string>): Promise<number> {
  let info;
  try {
    info = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  const inode = `${info.dev}:${info.ino}`;
  if (seen.has(inode)) return 0;
  seen.add(inode);
  let bytes = info.size;
  if (info.isDirectory()) {
    for (const entry of await readdir(path)) bytes += await walk(join(path, entry), seen);
  }
  return bytes;
}

/** Sizes of `paths` (each inode counted once, in the order given) and their total. */
export async function folderSizes(paths: readonly string[]): Promise<{ bytes: number; folders: FolderSize[] }> {
  const seen = new Set<string>();
  const folders: FolderSize[] = [];
  for (const path of paths) {
    const exists = await lstat(path).then(
      () => true,
      () => false,
    );
    folders.push({ path, bytes: exists ? await walk(path, seen) : 0, exists });
  }
  return { bytes: folders.reduce((sum, folder) => sum + folder.bytes, 0), folders };
}
