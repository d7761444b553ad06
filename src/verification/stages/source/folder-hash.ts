/**
 * @module verification/stages/source/folder-hash
 * A content hash of an installed code folder: SHA-256 over every file's relative path, kind and
 * bytes (a symlink by its target text, never followed), in sorted order, so the same tree gives
 * the same hash on every machine. `node_modules` and `.git` are left out (dependencies are
 * pinned by the lockfile's integrity hashes; git history by the commit). Bounded in files and
 * bytes: a tree beyond the bounds is reported as such instead of hashed in part.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

// .quiver-venv: a Python plugin's environment (issue #26), made on install like node_modules.
const SKIPPED = new Set(['node_modules', '.git', '.quiver-venv']);

/** The hash of a folder, or why there is none. */
export type FolderHash = { hash: string; files: number; bytes: number } | { error: string };

/** Hashes `root` (up to `maxFiles` files and `maxBytes` bytes); `signal` stops it between files. */
export async function hashFolder(root: string, options: { maxFiles?: number; maxBytes?: number; signal?: AbortSignal } = {}): Promise<FolderHash> {
  const maxFiles = options.maxFiles ?? 20_000;
  const maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
  const entries: Array<{ path: string; kind: 'file' | 'link' }> = [];
  const walk = async (relative: string): Promise<void> => {
    const names = (await readdir(join(root, relative))).sort();
    for (const name of names) {
      if (SKIPPED.has(name)) continue;
      const path = relative === '' ? name : `${relative}/${name}`;
      const stat = await lstat(join(root, path));
      if (stat.isDirectory()) await walk(path);
      else if (stat.isSymbolicLink()) entries.push({ path, kind: 'link' });
      else if (stat.isFile()) entries.push({ path, kind: 'file' });
      if (entries.length > maxFiles) throw new RangeError(`more than ${maxFiles} files`);
    }
  };
  try {
    await walk('');
  } catch (error) {
    return { error: error instanceof RangeError ? `the folder has ${error.message}; not hashed` : `the folder cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  const hash = createHash('sha256');
  let bytes = 0;
  for (const entry of entries) {
    options.signal?.throwIfAborted();
    const full = join(root, entry.path);
    const content = entry.kind === 'link' ? Buffer.from(await readlink(full), 'utf8') : await readFile(full);
    bytes += content.length;
    if (bytes > maxBytes) return { error: `the folder holds more than ${maxBytes} bytes; not hashed` };
    hash.update(`${entry.kind}\0${entry.path}\0${content.length}\0`);
    hash.update(content);
  }
  return { hash: hash.digest('hex'), files: entries.length, bytes };
}
