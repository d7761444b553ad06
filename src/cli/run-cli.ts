/**
 * @module cli/run-cli
 * `runCli(argv, io, env)`: finds the command (a group's words alone print its subcommands),
 * parses its options, opens the app when the command needs it, and maps errors to exit codes.
 * With --json an error is one line of JSON on stderr (`{"error":{"code","message"}}`);
 * otherwise `quiver: <message>`.
 */
import { parseArgs } from 'node:util';
import { toQuiverError, type ErrorCode, type QuiverError } from '../core/errors.ts';
import type { QuiverConfig } from '../config.ts';
import type { App } from '../app.ts';
import { QUIVER_VERSION } from '../core/version.ts';
import { EXIT_CODES, GLOBAL_OPTIONS, isForwardable, overridesFrom, type CliIo, type CommandSpec } from './command.ts';
import { commandHelp, commandsUnder, groupHelp, helpText } from './help.ts';
import { closestMatch, withSuggestion } from './did-you-mean.ts';

/** The exit code of every error code: a `Record` over the closed union, so a new code must be mapped here. */
const EXIT_BY_CODE: Record<ErrorCode, number> = {
  invalid_input: EXIT_CODES.usage,
  invalid_config: EXIT_CODES.usage,
  payload_too_large: EXIT_CODES.usage,
  not_found: EXIT_CODES.notFound,
  data_dir_locked: EXIT_CODES.unavailable,
  unavailable: EXIT_CODES.unavailable,
  timeout: EXIT_CODES.unavailable,
  circuit_open: EXIT_CODES.unavailable,
  rate_limited: EXIT_CODES.unavailable,
  embedder_unavailable: EXIT_CODES.unavailable,
  unauthorized: EXIT_CODES.unauthorized,
  forbidden: EXIT_CODES.unauthorized,
  conflict: EXIT_CODES.failure,
  missing_credential: EXIT_CODES.failure,
  quarantined: EXIT_CODES.failure,
  install_failed: EXIT_CODES.failure,
  git_failed: EXIT_CODES.failure,
  npm_failed: EXIT_CODES.failure,
  upstream_error: EXIT_CODES.failure,
  embedder_failed: EXIT_CODES.failure,
  secret_unreadable: EXIT_CODES.failure,
  schema_too_new: EXIT_CODES.failure,
  migration_changed: EXIT_CODES.failure,
  cancelled: EXIT_CODES.failure,
  internal: EXIT_CODES.failure,
};

/** Exit code for an error. */
export function exitCodeFor(error: QuiverError): number {
  return EXIT_BY_CODE[error.code];
}

function findCommand(commands: CommandSpec[], argv: string[]): { command: CommandSpec; rest: string[] } | undefined {
  let best: { command: CommandSpec; rest: string[] } | undefined;
  for (const command of commands) {
    const matches = command.path.every((word, index) => argv[index] === word);
    if (matches && (!best || command.path.length > best.command.path.length)) {
      best = { command, rest: argv.slice(command.path.length) };
    }
  }
  return best;
}

/**
 * No command matched. A group of commands (`quiver plugin`, `quiver plugin --help`) prints its
 * subcommands; any other words are a usage error, with the nearest group's subcommands if any.
 */
function groupOrUnknown(argv: string[], commands: CommandSpec[], io: CliIo): number {
  const firstOption = argv.findIndex((arg) => arg.startsWith('-'));
  const words = firstOption < 0 ? argv : argv.slice(0, firstOption);
  const onlyHelp = argv.slice(words.length).every((arg) => arg === '--help' || arg === '-h');
  for (let length = words.length; length > 0; length--) {
    const group = words.slice(0, length);
    if (commandsUnder(commands, group).length === 0) continue;
    if (length === words.length && onlyHelp) {
      io.stdout(groupHelp(commands, group));
      return EXIT_CODES.ok;
    }
    io.stderr(`quiver: unknown command '${argv.join(' ')}'.${didYouMean(words, commands)}\n${groupHelp(commands, group)}`);
    return EXIT_CODES.usage;
  }
  io.stderr(`quiver: unknown command '${argv.join(' ')}'.${didYouMean(words, commands)} Run 'quiver --help' for the list.\n`);
  return EXIT_CODES.usage;
}

/**
 * " Did you mean 'quiver plugin list'?" for mistyped command words (issue #26): each command
 * path, and each group its words start, compared with as many of the typed words.
 */
function didYouMean(words: string[], commands: CommandSpec[]): string {
  const paths = new Set<string>();
  for (const command of commands) {
    for (let length = 1; length <= command.path.length; length++) {
      if (length <= words.length) paths.add(command.path.slice(0, length).join(' '));
    }
  }
  // The longest typed prefix that is near a known path wins: `plugin lst` → `plugin list`.
  for (let length = words.length; length > 0; length--) {
    const typed = words.slice(0, length).join(' ');
    const near = closestMatch(typed, [...paths].filter((path) => path.split(' ').length === length));
    if (near !== undefined) return ` Did you mean 'quiver ${[near, ...words.slice(length)].join(' ')}'?`;
  }
  return '';
}

/** How a CLI invocation runs besides its arguments. */
export interface RunCliOptions {
  /**
   * An app that is already open (a server running a command for another process): used
   * instead of opening the store, and never closed by the runner.
   */
  app?: App;
  /** The caller's working directory (default: this process's). */
  cwd?: string;
  /** Standard input already read by the caller (forwarded commands). */
  stdin?: string;
}

/** Runs one CLI invocation and returns its exit code. */
export async function runCli(
  argv: string[],
  commands: CommandSpec[],
  io: CliIo,
  env: Record<string, string | undefined>,
  options: RunCliOptions = {},
): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    io.stdout(`quiver ${QUIVER_VERSION}\n`);
    return EXIT_CODES.ok;
  }
  // `quiver help plugin add` is `quiver plugin add --help`.
  if (argv[0] === 'help' && argv.length > 1) return runCli([...argv.slice(1), '--help'], commands, io, env);
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.stdout(helpText(commands));
    return EXIT_CODES.ok;
  }
  const found = findCommand(commands, argv);
  const wantsJson = argv.includes('--json');
  const fail = (error: QuiverError): number => {
    if (wantsJson) io.stderr(`${JSON.stringify({ error: error.toJSON() })}\n`);
    else io.stderr(`quiver: ${error.message}\n`);
    return exitCodeFor(error);
  };
  if (!found) return groupOrUnknown(argv, commands, io);
  const { command, rest } = found;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...GLOBAL_OPTIONS, ...(command.options ?? {}) },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    io.stderr(`quiver: ${(error as Error).message}\n${commandHelp(command)}`);
    return EXIT_CODES.usage;
  }
  if (parsed.values.help) {
    io.stdout(commandHelp(command));
    return EXIT_CODES.ok;
  }
  let config: QuiverConfig | undefined;
  let app: App | undefined;
  const borrowed = options.app;
  const args = { values: parsed.values, positionals: parsed.positionals };
  const cwd = options.cwd ?? process.cwd();
  let stdinRead: Promise<string | undefined> | undefined;
  const readStdin = () => (stdinRead ??= options.stdin !== undefined ? Promise.resolve(options.stdin) : (io.stdin?.() ?? Promise.resolve(undefined)));
  try {
    if (!borrowed && isForwardable(command)) {
      // The embedded folder belongs to a running `quiver serve`: let it run the command (issue #15),
      // with its configuration. Finding it reads only the settings that place the store, so a
      // forwarded command loads neither the configuration's schemas nor the store (issue #28);
      // the rest of the environment is checked when the command runs here.
      const { locateStore } = await import('../config-location.ts');
      const { store } = locateStore({ env, overrides: overridesFrom(parsed.values), uid: process.getuid?.() });
      if (store.kind === 'folder') {
        const stdin = command.readsStdin?.(args) ? await readStdin() : undefined;
        const [{ controlSocketPath }, { forwardToServer }] = await Promise.all([import('../store/control-socket-path.ts'), import('./forward.ts')]);
        const answer = await forwardToServer(controlSocketPath(store.path), { argv, cwd, ...(stdin !== undefined ? { stdin } : {}) });
        if (answer) {
          if (answer.stdout) io.stdout(answer.stdout);
          if (answer.stderr) io.stderr(answer.stderr);
          return answer.exitCode;
        }
      }
    }
    // The configuration (its schemas) loads once a command runs here: help, usage errors and
    // forwarded commands never pay for it (issue #28).
    const { loadConfig } = await import('../config.ts');
    const loadOnce = () =>
      borrowed?.config ??
      (config ??= loadConfig(env, { ...overridesFrom(parsed.values), defaultLogLevel: command.defaultLogLevel ?? 'warn' }, { uid: process.getuid?.() }));
    // A command that uses the store fails fast on an invalid environment, before it does anything.
    if (!borrowed && isForwardable(command)) loadOnce();
    return await command.run({
      args,
      io,
      env,
      json: parsed.values.json === true,
      config: loadOnce,
      cwd,
      readStdin,
      commands,
      async openApp(openOptions) {
        if (borrowed) return borrowed;
        // The app (store, services, servers) loads only for a command that opens it (issue #28):
        // help, a usage error or a command forwarded to a running server never pays for it.
        if (app) return app;
        const config = loadOnce();
        // The store starts opening first and the app's modules load meanwhile (issue #28): PGlite
        // starts in its own thread, while the module loader holds this one. The app's (and the
        // caller's) modules are asked for only once the store has started: asked for at once, they
        // queued the store's own small imports behind them, and PGlite started 0.3-0.7 s later.
        let started!: () => void;
        const starting = new Promise<void>((resolve) => (started = resolve));
        const store = import('../store/open.ts').then(({ openStore }) => openStore(config.store, { poolSize: config.databasePoolSize, onStarted: started }));
        store.catch(() => {}); // awaited by createApp below, which reports a store that fails to open
        await Promise.race([starting, store.then(() => {}, () => {})]);
        openOptions?.whileOpening?.();
        const loaded = await import('../app.ts').catch(async (error: unknown) => {
          await store.then(({ db }) => db.close(), () => {});
          throw error;
        });
        app = await loaded.createApp(config, { store });
        return app;
      },
    });
  } catch (error) {
    return fail(await withSuggestion(toQuiverError(error), app ?? borrowed));
  } finally {
    await app?.close().catch(() => {});
  }
}
