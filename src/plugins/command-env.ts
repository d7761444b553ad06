/**
 * @module plugins/command-env
 * The environment of the commands an install runs (git, npm, the package managers) when the
 * caller gives none: a search path and nothing else. The app hands over the environment it was
 * configured with (`config.commandEnv`), so proxies, CA files and npm settings of the machine
 * apply; library code never reads `process.env` itself (STYLE.md habit 3).
 */

/** A bare environment: the standard search path only. */
export const MINIMAL_COMMAND_ENV: Readonly<Record<string, string>> = Object.freeze({ PATH: '/usr/local/bin:/usr/bin:/bin' });
