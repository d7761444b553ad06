// glibc allocator settings for a long-running `quiver serve` (issue #28, docs/scale-out.md
// "Freed memory the C allocator keeps"): an idle server's RSS is largely memory glibc keeps in
// per-thread arenas after V8's compile threads free it. These settings are read only when a
// process starts, so the launcher re-executes itself with them (process.execve, Node >= 22.15:
// the same pid, the same open stdin/stdout/stderr, so `serve --stdio` keeps its client).
// Nothing happens on Node 20 (no process.execve), when GLIBC_TUNABLES is already set (the
// operator's choice, and the re-executed process itself), with QUIVER_MALLOC_TUNING=0, or for
// any other command (short-lived: one more Node start would cost more than it saves).
// Pure: the launcher, a process entry, hands in its environment (docs/engineering.md).

/** The settings: return freed memory above 128 KiB to the OS, map big blocks, two arenas. */
export const SERVE_GLIBC_TUNABLES = 'glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2';

/**
 * The environment `quiver ARGV` should re-execute itself with, or undefined to run as it is.
 * `canExecve`: process.execve exists; `platform`: process.platform (glibc is Linux's).
 */
export function mallocTuningEnv(argv, env, { canExecve, platform }) {
  if (!canExecve || platform !== 'linux') return undefined;
  if (env.GLIBC_TUNABLES !== undefined || env.QUIVER_MALLOC_TUNING === '0') return undefined;
  // The command is the first word that is not an option (`quiver --json serve` counts).
  if (argv.find((word) => !word.startsWith('-')) !== 'serve') return undefined;
  return { ...env, GLIBC_TUNABLES: SERVE_GLIBC_TUNABLES };
}
