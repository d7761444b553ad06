/** The glibc allocator settings `quiver serve` re-executes itself with (issue #28). */
export const SERVE_GLIBC_TUNABLES: string;
/** V8 worker threads of a server unless QUIVER_V8_POOL_SIZE says otherwise (issue #28). */
export const SERVE_V8_POOL_SIZE: number;
/** How `quiver ARGV` should re-execute itself, or undefined to run as it is. */
export function serveTuning(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  execArgv: readonly string[],
  host: { canExecve: boolean; platform: string },
): { env: Record<string, string | undefined>; execArgv: string[]; warning?: string } | undefined;
