/**
 * @module plugins/source-files
 * Reading files of a plugin's source tree without ever leaving it (issue #18 finding 4). A
 * plugin's git tree, npm package or folder is untrusted: a `package.json` that is a symlink to
 * a host file, or a `quiver.json` linked to `/etc/shadow`, must not make the hub (often root)
 * read that file into the catalog or an error message.
 *
 * A relative path is resolved one component at a time under the real path of the root: each
 * component is `lstat`ed, and a symlink is followed only by reading its text (`readlink`) and
 * resolving it lexically, so a link whose target leaves the root is refused without the target
 * ever being looked at (no oracle about which host files exist). `..`, absolute paths and NUL
 * bytes are refused outright. The file is then opened with O_NOFOLLOW (and O_NONBLOCK, so a
 * FIFO cannot hang the hub), must be a regular file under a size cap, and on Linux the opened
 * descriptor's path is checked again through /proc/self/fd, which closes the race of a
 * component swapped for a link between the walk and the open. Errors never quote file content.
 */
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import { QuiverError, ErrorCodes } from '../core/errors.ts';

/** Links followed in one resolution before giving up (Linux's own limit). */
const MAX_LINKS = 40;

/** Default cap on a file read from a plugin's source (manifests, package.json). */
export const SOURCE_FILE_LIMIT = 2 * 1024 * 1024;

/** A path of a plugin's source that is not acceptable: it leaves the tree, is not a file, or is too large. */
export class SourceFileError extends QuiverError {
  constructor(message: string, details: { path: string; reason: 'outside' | 'not-a-file' | 'too-large' | 'invalid-path' | 'link-loop' }) {
    super(ErrorCodes.invalidInput, message, { kind: 'user', details });
    this.name = 'SourceFileError';
  }
}

function outside(relativePath: string): SourceFileError {
  return new SourceFileError(`${relativePath} leads outside the plugin's folder (a link or a path out of it); refused`, {
    path: relativePath,
    reason: 'outside',
  });
}

function within(realRoot: string, path: string): boolean {
  return path === realRoot || path.startsWith(realRoot.endsWith(sep) ? realRoot : `${realRoot}${sep}`);
}

function components(path: string): string[] {
  return path.split(/[\\/]+/).filter((part) => part !== '' && part !== '.');
}

/**
 * Resolves `relativePath` under `root` without following any link out of it. Resolves to the
 * absolute, link-free path, or `undefined` when nothing is there; throws SourceFileError when
 * the path (or a link on it) leads outside the root.
 */
export async function resolveInsideRoot(root: string, relativePath: string): Promise<string | undefined> {
  if (relativePath.includes('\0')) throw new SourceFileError('a path of the plugin contains a NUL byte', { path: relativePath.replace(/\0/g, '\\0'), reason: 'invalid-path' });
  if (isAbsolute(relativePath)) throw outside(relativePath);
  const realRoot = await realpath(root);
  const pending = components(relativePath);
  const current: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '..') {
      // Lexically above the root is outside, whether or not the path was written that way.
      if (current.length === 0) throw outside(relativePath);
      current.pop();
      continue;
    }
    const candidate = join(realRoot, ...current, part);
    let info;
    try {
      info = await lstat(candidate);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw error;
    }
    if (info.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw new SourceFileError(`${relativePath} goes through too many links`, { path: relativePath, reason: 'link-loop' });
      const target = await readlink(candidate);
      if (isAbsolute(target)) {
        // Only a link spelled with the root's real path may stay inside; anything else is outside.
        if (!within(realRoot, target)) throw outside(relativePath);
        current.length = 0;
        pending.unshift(...components(target.slice(realRoot.length)));
      } else {
        pending.unshift(...components(target));
      }
      continue;
    }
    if (pending.length > 0 && !info.isDirectory()) return undefined;
    current.push(part);
  }
  return join(realRoot, ...current);
}

async function openInside(root: string, relativePath: string): Promise<{ handle: import('node:fs/promises').FileHandle; size: number } | undefined> {
  const path = await resolveInsideRoot(root, relativePath);
  if (path === undefined) return undefined;
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // ELOOP: the last component became a link after the walk.
    if (code === 'ELOOP') throw outside(relativePath);
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new SourceFileError(`${relativePath} is not a regular file`, { path: relativePath, reason: 'not-a-file' });
    if (process.platform === 'linux') {
      // What was really opened: catches a parent folder swapped for a link after the walk.
      const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
      const realRoot = await realpath(root);
      if (opened !== undefined && !within(realRoot, opened)) throw outside(relativePath);
    }
    return { handle, size: info.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Reads a text file of a plugin's source: `undefined` when it does not exist; SourceFileError
 * when it leads outside `root`, is not a regular file or is larger than `maxBytes`.
 */
export async function readSourceFile(root: string, relativePath: string, options: { maxBytes?: number } = {}): Promise<string | undefined> {
  const maxBytes = options.maxBytes ?? SOURCE_FILE_LIMIT;
  const opened = await openInside(root, relativePath);
  if (opened === undefined) return undefined;
  try {
    if (opened.size > maxBytes) {
      throw new SourceFileError(`${relativePath} is larger than ${maxBytes} bytes`, { path: relativePath, reason: 'too-large' });
    }
    // Read at most one byte over the cap: the file may have grown since fstat.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await opened.handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw new SourceFileError(`${relativePath} is larger than ${maxBytes} bytes`, { path: relativePath, reason: 'too-large' });
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await opened.handle.close();
  }
}

/** The first `bytes` bytes of a file of a plugin's source (e.g. an entry point's `#!` line); same rules as readSourceFile. */
export async function readSourceHead(root: string, relativePath: string, bytes: number): Promise<string | undefined> {
  const opened = await openInside(root, relativePath);
  if (opened === undefined) return undefined;
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await opened.handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await opened.handle.close();
  }
}

/** Parses JSON text from a plugin's source; the error names the file and position, never its content. */
export function parseSourceJson(text: string, file: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    // V8's message quotes the text ("Unexpected token 'r', "root:$6$…" is not valid JSON"): keep only where.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    return { error: `${file} is not valid JSON${position === undefined ? '' : ` (at position ${position})`}` };
  }
}
