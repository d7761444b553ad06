/** The glibc allocator settings `quiver serve` re-executes itself with (issue #28). */
export const SERVE_GLIBC_TUNABLES: string;
/** The environment `quiver ARGV` should re-execute itself with, or undefined to run as it is. */
export function mallocTuningEnv(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  host: { canExecve: boolean; platform: string },
): Record<string, string | undefined> | undefined;
