// Process settings for a long-running `quiver serve` (issue #28, docs/scale-out.md "Memory of one
// server"), read only when a process starts, so the launcher re-executes itself with them
// (process.execve, Node >= 22.15: the same pid, the same open stdin/stdout/stderr, so
// `serve --stdio` keeps its client):
// - glibc allocator settings: an idle server's RSS is largely memory glibc keeps in its arenas
//   after V8's compile threads free it (see SERVE_GLIBC_TUNABLES). Not when GLIBC_TUNABLES is already set (the
//   operator's choice) or with QUIVER_MALLOC_TUNING=0.
// - V8's worker pool at one thread (`--v8-pool-size=1`; Node's default is 4): each pool thread
//   compiles and collects in arenas of its own, about 38 MB of an idle server's RSS on a 2-core
//   machine. QUIVER_V8_POOL_SIZE=N sets another size (0: V8's own default); a --v8-pool-size the
//   operator gave (node's options or NODE_OPTIONS) stays.
// Nothing happens on Node 20 (no process.execve), or for any other command (short-lived: one
// more Node start would cost more than it saves). The re-executed process finds its settings in
// place and runs as it is. Pure: the launcher, a process entry, hands in what it sees
// (docs/engineering.md).

/**
 * The allocator settings: return freed memory above 128 KiB to the OS, two arenas, and map
 * every block of 32 KiB or more on its own, so freeing it returns it. 32 KiB is V8's largest
 * compile-zone segment: TurboFan compiling PGlite's hot WebAssembly functions in the background
 * allocates ~40 MB of them at start and frees them, and in the arena they came from, between
 * allocations that live on, they stayed resident (an idle server held 35-40 MB of free arena;
 * malloc_trim(0) by gdb dropped RSS by that much). With 128 KiB they were never mapped.
 */
export const SERVE_GLIBC_TUNABLES = 'glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=32768:glibc.malloc.arena_max=2';

/** V8 worker threads of a server unless QUIVER_V8_POOL_SIZE says otherwise. */
export const SERVE_V8_POOL_SIZE = 1;

const POOL_FLAG = '--v8-pool-size';

/**
 * How `quiver ARGV` should re-execute itself (its environment and node options), or undefined
 * to run as it is. `execArgv`: process.execArgv; `canExecve`: process.execve exists;
 * `platform`: process.platform (glibc is Linux's). A QUIVER_V8_POOL_SIZE that is not a whole
 * number from 0 to 64 is reported in `warning` and the default is used.
 */
export function serveTuning(argv, env, execArgv, { canExecve, platform }) {
  if (!canExecve || platform !== 'linux') return undefined;
  // The command is the first word that is not an option (`quiver --json serve` counts).
  if (argv.find((word) => !word.startsWith('-')) !== 'serve') return undefined;

  const tuneMalloc = env.GLIBC_TUNABLES === undefined && env.QUIVER_MALLOC_TUNING !== '0';
  const pool = poolSize(env.QUIVER_V8_POOL_SIZE);
  const poolGiven = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].some((option) => option === POOL_FLAG || option.startsWith(`${POOL_FLAG}=`));
  const setPool = pool.size !== 0 && !poolGiven;
  if (!tuneMalloc && !setPool) return undefined;
  return {
    env: tuneMalloc ? { ...env, GLIBC_TUNABLES: SERVE_GLIBC_TUNABLES } : env,
    execArgv: setPool ? [...execArgv, `${POOL_FLAG}=${pool.size}`] : [...execArgv],
    ...(pool.warning ? { warning: pool.warning } : {}),
  };
}

function poolSize(text) {
  if (text === undefined || text === '') return { size: SERVE_V8_POOL_SIZE };
  if (/^\d{1,2}$/.test(text) && Number(text) <= 64) return { size: Number(text) };
  return { size: SERVE_V8_POOL_SIZE, warning: `QUIVER_V8_POOL_SIZE must be a whole number from 0 to 64 (0: V8's default), not ${JSON.stringify(text)}; using ${SERVE_V8_POOL_SIZE}` };
}
