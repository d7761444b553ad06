/**
 * @module runtime/host-mounts
 * Host folders as a declared permission (issue #26): a plugin may be granted host paths,
 * read-only or read-write, which its sandbox binds at the same path. A grant never reaches the
 * hub's own paths (issue #23): a path that is, is inside, or contains the hub's home, data
 * folder, secret key file or state root is refused, when granted and again at every launch
 * (the path may have become a symbolic link since), so a grant fails closed.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { QuiverError, ErrorCodes } from '../core/errors.ts';

/** How a granted host path is shown to the plugin. */
export const mountModeSchema = z.enum(['ro', 'rw']);
export type MountMode = z.output<typeof mountModeSchema>;

/** One host path a plugin may see, at the same path in its sandbox. */
export const hostMountSchema = z.object({ path: z.string().min(1).max(4_096), mode: mountModeSchema });
export type HostMount = z.output<typeof hostMountSchema>;

function isUnder(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The hub path a host path would expose, if any: the path is one of them, inside one, or a
 * folder above one (a grant of `~` would show `~/.quiver`). Both sides are compared as given and
 * with symbolic links resolved.
 */
export function protectedOverlap(path: string, protectedPaths: readonly string[]): string | undefined {
  const candidates = [...new Set([resolve(path), realOrSelf(resolve(path))])];
  for (const hub of protectedPaths) {
    for (const side of [...new Set([resolve(hub), realOrSelf(resolve(hub))])]) {
      if (candidates.some((candidate) => isUnder(candidate, side) || isUnder(side, candidate))) return resolve(hub);
    }
  }
  return undefined;
}

/** `DIR`, `DIR:ro` or `DIR:rw` (read-write by default only where `defaultMode` says so). */
export function parseMountArgument(text: string, defaultMode: MountMode = 'ro'): { path: string; mode: MountMode } {
  const match = /^(.*?)(?::(ro|rw))?$/.exec(text.trim());
  const path = match?.[1] ?? '';
  if (path === '' || /[\0\n\r]/.test(path)) throw new QuiverError(ErrorCodes.invalidInput, `'${text}' is not a host path (give DIR, DIR:ro or DIR:rw)`);
  return { path, mode: (match?.[2] as MountMode | undefined) ?? defaultMode };
}

/** The refusal of a grant that would expose one of the hub's paths. */
export function protectedPathRefusal(path: string, hubPath: string): QuiverError {
  return new QuiverError(
    ErrorCodes.invalidInput,
    `cannot grant ${path}: it ${isUnder(resolve(path), hubPath) ? 'is inside' : resolve(path) === hubPath ? 'is' : 'contains'} the hub's own ${hubPath} ` +
      "(its home, data folder, secret key or plugin state); no plugin may see those. Grant a folder beside them instead.",
    { kind: 'user', details: { reason: 'protected_path', path, protected: hubPath } },
  );
}

/**
 * Checks the grants of a spec at launch (fail closed): each must be absolute, unchanged by a
 * symbolic link since it was granted, and clear of the hub's paths. Returns the ones that exist
 * and a warning for each that does not (the plugin then sees no such path).
 */
export function launchMounts(mounts: readonly HostMount[], hiddenPaths: readonly string[], pluginName: string): { mounts: HostMount[]; warnings: string[] } {
  const kept: HostMount[] = [];
  const warnings: string[] = [];
  for (const mount of mounts) {
    if (!isAbsolute(mount.path)) throw new QuiverError(ErrorCodes.invalidInput, `plugin '${pluginName}': granted host path '${mount.path}' is not absolute`);
    const hub = protectedOverlap(mount.path, hiddenPaths);
    if (hub !== undefined) throw protectedPathRefusal(mount.path, hub);
    let real: string;
    try {
      real = realpathSync(mount.path);
    } catch {
      warnings.push(`granted host path ${mount.path} does not exist: not mounted`);
      continue;
    }
    if (real !== resolve(mount.path)) {
      throw new QuiverError(
        ErrorCodes.invalidInput,
        `plugin '${pluginName}': granted host path ${mount.path} now leads to ${real} (a symbolic link): not mounted; grant ${real} itself if that is meant`,
        { kind: 'user', details: { reason: 'mount_redirected', path: mount.path, real } },
      );
    }
    kept.push({ path: real, mode: mount.mode });
  }
  return { mounts: kept, warnings };
}
