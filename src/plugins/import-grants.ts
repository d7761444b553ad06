/**
 * @module plugins/import-grants
 * Host paths named in an imported client configuration become host-path grants (issue #26): a
 * server started with a folder argument expects to see that folder, and its sandbox shows it
 * nothing of the host unless granted. A filesystem-style server's folder arguments (the
 * reference `@modelcontextprotocol/server-filesystem` and forks by that name) are granted
 * read-write — that server's tools write and edit files in them, which is what the config
 * meant; any other server's absolute folder arguments are granted read-only, with a warning
 * naming the command that makes one writable. `quiver plugin add --mount` applies the grants,
 * and the hub's own paths are refused there.
 */
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, normalize } from 'node:path';

/** A grant the import proposes, from one argument of the entry. */
export interface ImportedGrant {
  path: string;
  mode: 'ro' | 'rw';
}

/** npm package names (without scope or version) whose folder arguments are read-write roots. */
const FILESYSTEM_SERVERS = new Set(['server-filesystem', 'mcp-server-filesystem', 'filesystem-mcp-server']);

/** The package name of an npm spec, without version: `@scope/name@1` → `@scope/name`. */
function packageName(spec: string): string {
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  return at < 0 ? spec : spec.slice(0, at);
}

/** True for a package that is a filesystem-style server (its arguments are the folders it serves and writes). */
export function isFilesystemServer(spec: string): boolean {
  return FILESYSTEM_SERVERS.has(packageName(spec).split('/').pop() ?? '');
}

function existingFolder(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The grants an entry's arguments call for. `--flag=/path` and bare absolute paths count; a path
 * that does not exist here is left to the server (a filesystem server is granted it anyway, so
 * `plugin add` reports it missing instead of the server failing in its sandbox).
 */
export function importedGrants(spec: string, args: readonly string[], plugin: string): { mounts: ImportedGrant[]; warnings: string[] } {
  const filesystem = isFilesystemServer(spec);
  const mounts: ImportedGrant[] = [];
  const warnings: string[] = [];
  for (const arg of args) {
    const value = arg.startsWith('-') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg;
    if (!isAbsolute(value) || value.includes('\0')) continue;
    const path = normalize(value).replace(/(.)\/+$/, '$1');
    if (filesystem) mounts.push({ path, mode: 'rw' });
    else if (existingFolder(path)) {
      mounts.push({ path, mode: 'ro' });
      warnings.push(`${path} is granted read-only; if the server writes there, run 'quiver plugin mount ${plugin} ${path}:rw'`);
    }
  }
  const unique = [...new Map(mounts.map((mount) => [mount.path, mount])).values()];
  return { mounts: unique, warnings };
}
