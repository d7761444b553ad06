/**
 * @module runtime/host-mounts
 * Host folders as a declared permission (issue #26): a plugin may be granted host paths,
 * read-only or read-write, which its sandbox binds at the same path. A grant never reaches the
 * hub's own paths (issue #23): a path that is, is inside, or contains the hub's home, data
 * folder, secret key file or state root is refused, when granted and again at every launch
 * (the path may have become a symbolic link since), so a grant fails closed.
 */
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
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

/** Error text that says a path could not be reached (Node's codes, and what servers print). */
const PATH_ERROR = /ENOENT|EACCES|EROFS|EPERM|no such file|permission denied|cannot access|not accessible|inaccessible|read-only file system/i;
/** Absolute paths in a text (up to a quote, a space or trailing punctuation). */
const ABSOLUTE_PATH = /(?<![\w.~-])\/[^\s'"`,;()<>[\]{}]+/g;
/** Folders every sandbox shows from the host (sandbox.ts): an error there is not about grants. */
const ALWAYS_SHOWN = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/proc', '/dev'];

function nearestExisting(path: string): string | undefined {
  for (let current = path; current !== '/'; current = resolve(current, '..')) {
    try {
      realpathSync(current);
      return current;
    } catch {
      // go up
    }
  }
  return undefined;
}

/**
 * The hint for a plugin error about a host path its grants do not cover (issue #26): the path
 * exists on the host (or its folder does, for a file to create), is none of the hub's and none
 * the sandbox shows anyway, so the sandbox hid it. Names the command that grants it, or widens a
 * read-only grant on EROFS. Undefined when the text is about something else.
 */
export function ungrantedPathHint(
  text: string,
  spec: { pluginName: string; mounts: readonly HostMount[]; cwd?: string | undefined; codeDir?: string | undefined; readOnlyPaths: readonly string[]; stateDir?: string | undefined },
  options: { hiddenPaths?: readonly string[]; installing?: boolean } = {},
): string | undefined {
  if (!PATH_ERROR.test(text)) return undefined;
  const own = [...ALWAYS_SHOWN, ...[spec.cwd, spec.codeDir, spec.stateDir].filter((path): path is string => path !== undefined), ...spec.readOnlyPaths];
  for (const match of text.matchAll(ABSOLUTE_PATH)) {
    const path = resolve(match[0].replace(/[.:]+$/, ''));
    if (own.some((root) => isUnder(path, root))) continue;
    const hub = protectedOverlap(path, options.hiddenPaths ?? []);
    if (hub !== undefined) {
      return `Quiver: ${path} is the hub's own (${hub}); no plugin may see it, and it cannot be granted.`;
    }
    const granted = spec.mounts.find((mount) => isUnder(path, mount.path));
    if (granted !== undefined) {
      if (granted.mode === 'ro' && /EROFS|read-only file system|EACCES|EPERM|permission denied/i.test(text)) {
        return `Quiver: ${granted.path} is granted to plugin '${spec.pluginName}' read-only; to let it write there run 'quiver plugin mount ${spec.pluginName} ${granted.path}:rw' (it starts with it at its next call).`;
      }
      continue;
    }
    const existing = nearestExisting(path);
    if (existing === undefined || existing === '/' || (existing !== path && existing !== resolve(path, '..'))) continue;
    const folder = statSync(existing).isDirectory() ? existing : dirname(existing);
    return options.installing === true
      ? `Quiver: the plugin's sandbox shows it no ${folder} (host paths are granted, never shown by default); install it with '--mount ${folder}' (add ':rw' to let it write) on 'quiver plugin add'.`
      : `Quiver: ${path} is outside the host paths granted to plugin '${spec.pluginName}', so its sandbox does not show it; grant it with 'quiver plugin mount ${spec.pluginName} ${folder}' (add ':rw' to let it write; it starts with it at its next call).`;
  }
  return undefined;
}
