/**
 * @module cli/command
 * The shape of a CLI command and the context it runs in. Commands are small modules under
 * `src/cli/commands/`; `runCli` parses arguments with `node:util` parseArgs and maps errors
 * to the documented exit codes (see `EXIT_CODES`).
 */
import type { ParseArgsConfig } from 'node:util';
import type { App } from '../app.ts';
import type { ConfigOverrides, QuiverConfig } from '../config.ts';

/** Documented exit codes. */
export const EXIT_CODES = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  unavailable: 4,
  unauthorized: 5,
} as const;

/** Where a command writes. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** Parsed arguments of one command. */
export interface CliArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** What a command gets when it runs. */
export interface CliContext {
  args: CliArgs;
  io: CliIo;
  env: Record<string, string | undefined>;
  /** Loads the configuration (environment plus global flags such as --data). */
  config(): QuiverConfig;
  /** Opens the app (store, services) once; closed by the runner after the command. */
  openApp(): Promise<App>;
  /** True when --json was given: print one JSON document on stdout. */
  json: boolean;
}

/** A CLI command. */
export interface CommandSpec {
  /** Words that select the command, e.g. `['tools', 'list']`. */
  path: string[];
  summary: string;
  /** Usage line after `quiver <path>`, e.g. `QUERY [--k N]`. */
  usage: string;
  options?: ParseArgsConfig['options'];
  /** Returns the exit code. Long-running commands resolve when they stop. */
  run(context: CliContext): Promise<number>;
  /** True for commands that never need the store (help, version, eval). */
  storeless?: boolean;
  /** Log level unless configured: `info` for long-running servers; one-shot commands default to `warn`. */
  defaultLogLevel?: 'info' | 'warn';
}

/** Options every command accepts. */
export const GLOBAL_OPTIONS = {
  data: { type: 'string' },
  'database-url': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  'log-level': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** Global overrides taken from parsed global options. */
export function overridesFrom(values: CliArgs['values']): ConfigOverrides {
  return {
    dataDir: typeof values.data === 'string' ? values.data : undefined,
    databaseUrl: typeof values['database-url'] === 'string' ? values['database-url'] : undefined,
    logLevel: typeof values['log-level'] === 'string' ? values['log-level'] : undefined,
  };
}

/** Prints `value` as one JSON document. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** Renders rows as an aligned text table. */
export function formatTable(headers: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '' : String(cell))))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  return cells.map((row) => row.map((cell, column) => (cell ?? '').padEnd(widths[column] ?? 0)).join('  ').trimEnd()).join('\n') + '\n';
}
