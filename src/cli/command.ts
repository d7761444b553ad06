/**
 * @module cli/command
 * The shape of a CLI command and the context it runs in. Commands are small modules under
 * `src/cli/commands/`; `runCli` parses arguments with `node:util` parseArgs and maps errors
 * to the documented exit codes (see `EXIT_CODES`).
 */
import { userInfo } from 'node:os';
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

/** Where a command writes (and, for the few that read it, where its standard input comes from). */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads all of standard input; undefined when there is none to read (a terminal). */
  stdin?: () => Promise<string | undefined>;
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
  /**
   * Opens the app (store, services) once; closed by the runner after the command.
   * `whileOpening` runs once the store is starting on its own, before the app's modules load:
   * what it starts loading (a server's modules) shares that time instead of delaying the store
   * (issue #28). It does not run when the app is already open or borrowed.
   */
  openApp(options?: { whileOpening?: () => void }): Promise<App>;
  /** True when --json was given: print one JSON document on stdout. */
  json: boolean;
  /** The caller's working directory: relative paths in arguments resolve against it (it differs from the process's when a server runs the command). */
  cwd: string;
  /** Standard input, read once; undefined when there is none (a terminal). */
  readStdin(): Promise<string | undefined>;
  /**
   * The command list this invocation was dispatched from (`runCli` sets it): a server runs the
   * commands other processes forward to it with the same list, without importing it (the list
   * includes `serve` itself).
   */
  commands?: readonly CommandSpec[];
}

/** How `node:util` parseArgs declares one option. */
export type ParseArgsOption = NonNullable<ParseArgsConfig['options']>[string];

/**
 * One option of a command: its parseArgs declaration plus what `--help` prints. The
 * description is required so that no option can be added without documenting it.
 */
export interface CommandOption extends ParseArgsOption {
  /** What the option does, one line. */
  description: string;
  /** The value's placeholder in help (string options), e.g. `N` or `DIR`; default `VALUE`. */
  valueName?: string;
  /** The default as help shows it, when the command applies it itself (no parseArgs `default`). */
  defaultHelp?: string;
}

/** The options of a command, by long name. */
export type CommandOptions = Record<string, CommandOption>;

/** Help for options declared without it in a lower layer: one entry per option, enforced by the type. */
export type OptionHelp<Options extends Record<string, ParseArgsOption>> = {
  [Name in keyof Options]: string | Pick<CommandOption, 'description' | 'valueName' | 'defaultHelp'>;
};

/** Adds help to options declared in a lower layer (e.g. the gateway's stdio flags). */
export function describeOptions<Options extends Record<string, ParseArgsOption>>(options: Options, help: OptionHelp<Options>): CommandOptions {
  const described: CommandOptions = {};
  for (const [name, option] of Object.entries(options)) {
    const entry = help[name as keyof Options];
    described[name] = { ...option, ...(typeof entry === 'string' ? { description: entry } : entry) };
  }
  return described;
}

/** A CLI command. */
export interface CommandSpec {
  /** Words that select the command, e.g. `['tools', 'list']`. */
  path: string[];
  /** One line for `quiver --help` and the command's own help. */
  summary: string;
  /** Usage line after `quiver <path>`, e.g. `QUERY [--k N]`. */
  usage: string;
  /** Options besides the global ones, each with its help. */
  options?: CommandOptions;
  /** Returns the exit code. Long-running commands resolve when they stop. */
  run(context: CliContext): Promise<number>;
  /** True for commands that never need the store (help, version, eval). */
  storeless?: boolean;
  /** Log level unless configured: `info` for long-running servers; one-shot commands default to `warn`. */
  defaultLogLevel?: 'info' | 'warn';
  /** False for commands a running server cannot run for another process (servers themselves). */
  forwardable?: boolean;
  /** True when, for these arguments, the command reads standard input (sent along when a server runs it). */
  readsStdin?(args: CliArgs): boolean;
}

/** Options every command accepts. */
export const GLOBAL_OPTIONS = {
  data: { type: 'string', valueName: 'DIR', description: 'the embedded PGlite data folder; env QUIVER_DATA_DIR', defaultHelp: '~/.quiver/data' },
  'database-url': { type: 'string', valueName: 'URL', description: 'postgres://… or memory:// instead of the data folder; env QUIVER_DATABASE_URL' },
  json: { type: 'boolean', default: false, description: 'print one JSON document on stdout; errors as one JSON line on stderr' },
  help: { type: 'boolean', short: 'h', default: false, description: 'show help for the command' },
  'log-level': { type: 'string', valueName: 'LEVEL', description: 'silent, error, warn, info or debug; env QUIVER_LOG_LEVEL', defaultHelp: 'warn; info for serve' },
} as const satisfies CommandOptions;

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

/** A string option's value; undefined when it was not given (or given as a flag). */
export function stringOption(context: Pick<CliContext, 'args'>, name: string): string | undefined {
  const value = context.args.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Who acts from the command line, as recorded with trust and approvals: `cli:<by>`, else `cli:<operating-system user>`. */
export function cliActor(by?: string): string {
  if (by !== undefined && by.trim() !== '') return `cli:${by.trim()}`;
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

/** True for commands that may run inside a serving Quiver (not servers, not store-less ones). */
export function isForwardable(command: CommandSpec): boolean {
  return command.storeless !== true && command.forwardable !== false;
}
