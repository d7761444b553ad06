/**
 * @module runtime/code-overlay
 * A sandboxed plugin's own folder, writable to it without touching the install cache
 * (issue #15: server-memory writes `memory.jsonl` beside its code). The cache folder is the
 * lower layer of an overlayfs mount whose upper layer lives in the plugin's state folder, so
 * what the plugin writes there survives a restart and the shared cache never changes.
 *
 * bubblewrap 0.8 (Debian 12) has no `--overlay`, so the mount is made one step earlier: the
 * launch chain runs `unshare --user --map-root-user --mount`, a small `sh` mounts the overlay
 * in that private mount namespace, then `exec`s bwrap, which binds the mounted folder
 * writable like any other path. Everything runs as the sandbox user: nothing privileged ever
 * reads the plugin-writable upper folder.
 *
 * Permissions: the cache belongs to Quiver's user. As root, the sandbox runs as `nobody`, which
 * may not create files in root's folders, merged or not; overlayfs shows a folder with the
 * owner of its upper copy, so the script first mirrors the cache's folders (folders only) into
 * the upper layer as the sandbox user. New files, renames and deletions then work anywhere in
 * the folder; a file shipped in the package stays root's and is replaced rather than edited in
 * place. Run by a non-root user, the sandbox already maps to the cache's owner: no mirror.
 */
import { join } from 'node:path';

/** Executables the overlay step runs (absolute paths: the plugin's PATH must not choose them). */
export interface OverlayTools {
  unshare: string;
  mount: string;
  find: string;
  xargs: string;
  mkdir: string;
}

/** Where a plugin's overlay lives: `<stateDir>/.quiver-overlay/{upper,work}`. */
export interface OverlayLayout {
  /** The folder shown writable: the plugin's install (cache) folder. */
  lower: string;
  /** The plugin's writes, relative to `lower`. */
  upper: string;
  /** overlayfs's scratch folder (same filesystem as `upper`). */
  work: string;
  /** The folder holding both, hidden inside the sandbox. */
  root: string;
}

/** Name of the folder inside the state folder that holds the overlay layers. */
export const overlayFolderName = '.quiver-overlay';

/** The overlay layout of a plugin whose state folder is `stateDir`. */
export function overlayLayout(stateDir: string, lower: string): OverlayLayout {
  const root = join(stateDir, overlayFolderName);
  return { lower, upper: join(root, 'upper'), work: join(root, 'work'), root };
}

/**
 * Why a path cannot be given to overlayfs, or undefined when it can: the mount options are a
 * comma-separated list and `lowerdir` splits on ':', so such paths are refused, not escaped.
 */
export function unsafeOverlayPath(path: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  return /[,:\\\s\u0000-\u001f]/.test(path) ? `the path '${path}' contains a character overlayfs mount options cannot carry (',', ':', '\\', space or control)` : undefined;
}

// $1 lower, $2 upper, $3 work, $4 mirror (1/0), $5 find, $6 xargs, $7 mkdir, $8 mount; then the command.
// The mirror is best effort (a folder the plugin replaced by a file stays a file).
const script = [
  'lower=$1 upper=$2 work=$3 mirror=$4 find=$5 xargs=$6 mkdir=$7 mount=$8; shift 8',
  '"$mkdir" -p -- "$upper" "$work" || exit 96',
  'if [ "$mirror" = 1 ]; then ( cd "$upper" && "$find" "$lower" -mindepth 1 -type d -printf \'%P\\0\' | "$xargs" -0 -r "$mkdir" -p -- ) 2>/dev/null; fi',
  '"$mount" -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$work" "$lower" || { echo "quiver: cannot mount the writable overlay of $lower" >&2; exit 96; }',
  'exec "$@"',
].join('\n');

/**
 * The chain prefix that mounts the overlay and then execs the rest (bwrap): put it after any
 * `setpriv` (so it runs as the sandbox user) and before bwrap.
 */
export function overlayChain(tools: OverlayTools, layout: OverlayLayout, options: { mirrorFolders: boolean }): string[] {
  return [
    tools.unshare, '--user', '--map-root-user', '--mount', '--propagation', 'private', '--',
    '/bin/sh', '-c', script, 'quiver-overlay',
    layout.lower, layout.upper, layout.work, options.mirrorFolders ? '1' : '0',
    tools.find, tools.xargs, tools.mkdir, tools.mount,
  ];
}
