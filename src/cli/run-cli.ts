/**
 * @module cli/run-cli
 * `runCli(argv, io, env)`: finds the command, parses its options, opens the app when the
 * command needs it, and maps errors to exit codes. With --json an error is one line of
 * JSON on stderr (`{"error":{"code","message"}}`); otherwise `quiver: <message>`.
 */
import { parseArgs } from 'node:util';
import { toQuiverError, ErrorCodes, type QuiverError } from '../core/errors.ts';
import { loadConfig, type QuiverConfig } from '../config.ts';
import { createApp, type App } from '../app.ts';
import { QUIVER_VERSION } from '../core/version.ts';
import { EXIT_CODES, GLOBAL_OPTIONS, overridesFrom, type CliIo, type CommandSpec } from './command.ts';

/** Exit code for an error. */
export function exitCodeFor(error: QuiverError): number {
  switch (error.code) {
    case ErrorCodes.invalidInput:
    case ErrorCodes.config:
      return EXIT_CODES.usage;
    case ErrorCodes.notFound:
      return EXIT_CODES.notFound;
    case ErrorCodes.dataDirLocked:
    case ErrorCodes.unavailable:
    case ErrorCodes.timeout:
    case ErrorCodes.circuitOpen:
      return EXIT_CODES.unavailable;
    case ErrorCodes.unauthorized:
    case ErrorCodes.forbidden:
      return EXIT_CODES.unauthorized;
    default:
      return EXIT_CODES.failure;
  }
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

/** The top-level help text. */
export function helpText(commands: CommandSpec[]): string {
  const lines = commands.map((c) => `  quiver ${[...c.path, c.usage].filter(Boolean).join(' ')}\n      ${c.summary}`);
  return [
    'Quiver: MCP plugin hub and tool gateway.',
    '',
    'Usage: quiver <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Global options:',
    '  --data DIR            PGlite data folder (default ~/.quiver/data, or QUIVER_DATA_DIR)',
    '  --database-url URL    postgres://… or memory:// (or QUIVER_DATABASE_URL)',
    '  --json                print one JSON document on stdout',
    '  --log-level LEVEL     silent|error|warn|info|debug',
    '  -h, --help            help for a command',
    '',
    'Exit codes: 0 ok, 1 failure, 2 bad usage or input, 3 not found, 4 unavailable (e.g. data folder in use), 5 unauthorized.',
    '',
  ].join('\n');
}

function commandHelp(command: CommandSpec): string {
  const options = Object.entries(command.options ?? {}).map(
    ([name, spec]) => `  --${name}${spec.type === 'string' ? ' VALUE' : ''}${spec.multiple ? ' (repeatable)' : ''}`,
  );
  return [`Usage: quiver ${[...command.path, command.usage].filter(Boolean).join(' ')}`, '', command.summary, '', ...(options.length ? ['Options:', ...options, ''] : [])].join('\n');
}

/** Runs one CLI invocation and returns its exit code. */
export async function runCli(
  argv: string[],
  commands: CommandSpec[],
  io: CliIo,
  env: Record<string, string | undefined>,
): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    io.stdout(`quiver ${QUIVER_VERSION}\n`);
    return EXIT_CODES.ok;
  }
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
  if (!found) {
    io.stderr(`quiver: unknown command '${argv.join(' ')}'. Run 'quiver --help' for the list.\n`);
    return EXIT_CODES.usage;
  }
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
  const loadOnce = () =>
    (config ??= loadConfig(env, { ...overridesFrom(parsed.values), defaultLogLevel: command.defaultLogLevel ?? 'warn' }, { uid: process.getuid?.() }));
  try {
    return await command.run({
      args: { values: parsed.values, positionals: parsed.positionals },
      io,
      env,
      json: parsed.values.json === true,
      config: loadOnce,
      async openApp() {
        app ??= await createApp(loadOnce());
        return app;
      },
    });
  } catch (error) {
    return fail(toQuiverError(error));
  } finally {
    await app?.close().catch(() => {});
  }
}
