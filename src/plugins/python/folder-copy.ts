/**
 * @module plugins/python/folder-copy
 * A local folder that is a Python project gets its venv from Quiver (issue #26) in the install
 * cache, never in the user's folder: the folder's files are copied into the install's staging
 * tree and hashed on the way (SHA-256 over each relative path, kind and bytes, sorted; a link by
 * its target text, never followed), and the tree is placed at `<cacheDir>/pyfolder/<hash>`. The
 * same content gives the same folder (reused as is, venv included); any change to the folder's
 * files gives another hash and so a fresh folder and venv on the next install or update.
 *
 * Left out of copy and hash: what an install or a tool makes rather than what the author wrote
 * (.git, node_modules, __pycache__, *.egg-info, tool caches) and any virtual environment (a
 * folder holding pyvenv.cfg). Bounded like the verification hash (20,000 files, 256 MiB).
 */
import { createHash } from 'node:crypto';
import { chmod, copyFile, lstat, mkdir, readdir, readFile, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';

const SKIPPED = new Set(['.git', 'node_modules', '__pycache__', '.quiver-venv', '.mypy_cache', '.pytest_cache', '.ruff_cache', '.tox', '.nox']);
const MAX_FILES = 20_000;
const MAX_BYTES = 256 * 1024 * 1024;

/** The folder could not be copied (too large, unreadable). */
export class FolderCopyError extends Error {}

/** True when `folder` (a direct child of a project) is a virtual environment. */
async function isVenv(folder: string): Promise<boolean> {
  return lstat(join(folder, 'pyvenv.cfg')).then((info) => info.isFile(), () => false);
}

/** True when the project folder brings a venv of its own (a child folder holding pyvenv.cfg): it is then run in place as before. */
export async function hasOwnVenv(folder: string): Promise<boolean> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) if (entry.isDirectory() && entry.name !== '.quiver-venv' && (await isVenv(join(folder, entry.name)))) return true;
  return false;
}

/** Copies `source` into the empty folder `target` and returns the content hash (hex) of what was copied. */
export async function copyProjectFolder(source: string, target: string): Promise<{ hash: string; files: number; bytes: number }> {
  const entries: Array<{ path: string; kind: 'file' | 'link'; mode: number }> = [];
  const walk = async (relative: string): Promise<void> => {
    const names = (await readdir(join(source, relative))).sort();
    for (const name of names) {
      if (SKIPPED.has(name) || name.endsWith('.egg-info')) continue;
      const path = relative === '' ? name : `${relative}/${name}`;
      const info = await lstat(join(source, path));
      if (info.isDirectory()) {
        if (!(await isVenv(join(source, path)))) await walk(path);
      } else if (info.isSymbolicLink()) entries.push({ path, kind: 'link', mode: 0 });
      else if (info.isFile()) entries.push({ path, kind: 'file', mode: info.mode & 0o755 });
      if (entries.length > MAX_FILES) throw new FolderCopyError(`the folder has more than ${MAX_FILES} files`);
    }
  };
  try {
    await walk('');
  } catch (error) {
    if (error instanceof FolderCopyError) throw error;
    throw new FolderCopyError(`the folder cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const hash = createHash('sha256');
  let bytes = 0;
  for (const entry of entries) {
    const from = join(source, entry.path);
    const to = join(target, entry.path);
    await mkdir(join(to, '..'), { recursive: true, mode: 0o755 });
    const content = entry.kind === 'link' ? Buffer.from(await readlink(from), 'utf8') : await readFile(from);
    bytes += content.length;
    if (bytes > MAX_BYTES) throw new FolderCopyError(`the folder holds more than ${MAX_BYTES} bytes`);
    hash.update(`${entry.kind}\0${entry.path}\0${content.length}\0`);
    hash.update(content);
    // Readable by the sandbox user; a link is copied as the link it is (the launch check refuses links out).
    if (entry.kind === 'link') await symlink(content.toString('utf8'), to);
    else {
      await copyFile(from, to);
      await chmod(to, entry.mode | 0o444);
    }
  }
  return { hash: hash.digest('hex'), files: entries.length, bytes };
}
