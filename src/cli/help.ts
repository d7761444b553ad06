/**
 * @module cli/help
 * What `--help` prints, built from the command specs: the command list (`quiver --help`), a
 * group's subcommands (`quiver plugin --help`) and one command's usage with every option, its
 * description and default (`quiver plugin add --help`). Pure text, no I/O.
 */
import { GLOBAL_OPTIONS, type CommandOption, type CommandSpec } from './command.ts';

const EXIT_CODES_LINE = 'Exit codes: 0 ok, 1 failure, 2 bad usage or input, 3 not found, 4 unavailable (e.g. data folder in use), 5 unauthorized.';

/** The default as help shows it; false booleans (the flag is off) show none. */
function defaultOf(option: CommandOption): string | undefined {
  if (option.defaultHelp !== undefined) return option.defaultHelp;
  if (option.default === undefined || option.default === false) return undefined;
  return Array.isArray(option.default) ? option.default.join(',') : String(option.default);
}

/** Two aligned columns; a left cell too wide for the column puts its text on the next line. */
function columns(rows: Array<[string, string]>, maxLeft = 30): string[] {
  const width = Math.min(maxLeft, Math.max(0, ...rows.map(([left]) => left.length)));
  return rows.map(([left, right]) =>
    left.length <= width ? `  ${left.padEnd(width)}  ${right}`.trimEnd() : `  ${left}\n  ${' '.repeat(width)}  ${right}`,
  );
}

/** One row per option: `--name VALUE`, then its description, default and whether it repeats. */
function optionRows(options: Record<string, CommandOption>): Array<[string, string]> {
  return Object.entries(options).map(([name, option]) => {
    const flag = `${option.short ? `-${option.short}, ` : ''}--${name}${option.type === 'string' ? ` ${option.valueName ?? 'VALUE'}` : ''}`;
    const fallback = defaultOf(option);
    const notes = [option.multiple ? 'repeatable' : undefined, fallback === undefined ? undefined : `default: ${fallback}`].filter(Boolean);
    return [flag, `${option.description}${notes.length ? ` (${notes.join('; ')})` : ''}`];
  });
}

/** `quiver --help`: every command with its summary, the global options and the exit codes. */
export function helpText(commands: CommandSpec[]): string {
  return [
    'Quiver: MCP plugin hub and tool gateway.',
    '',
    'Usage: quiver <command> [options]',
    '',
    'Commands:',
    ...columns(commands.map((command) => [command.path.join(' '), command.summary]), 22),
    '',
    'Global options:',
    ...columns([...optionRows(GLOBAL_OPTIONS), ['-v, --version', 'print the version']]),
    '',
    "Run 'quiver <command> --help' (or 'quiver help <command>') for a command's usage and options.",
    EXIT_CODES_LINE,
    '',
  ].join('\n');
}

/** The commands under a group of words (e.g. `plugin`, `plugin secret`); empty when none. */
export function commandsUnder(commands: CommandSpec[], words: readonly string[]): CommandSpec[] {
  return commands.filter((command) => command.path.length > words.length && words.every((word, index) => command.path[index] === word));
}

/** `quiver plugin --help`: the group's subcommands with their summaries. */
export function groupHelp(commands: CommandSpec[], words: readonly string[]): string {
  const group = words.join(' ');
  return [
    `Usage: quiver ${group} <command> [options]`,
    '',
    'Commands:',
    ...columns(commandsUnder(commands, words).map((command) => [command.path.slice(words.length).join(' '), command.summary]), 22),
    '',
    `Run 'quiver ${group} <command> --help' for a command's usage and options.`,
    '',
  ].join('\n');
}

/** `quiver plugin add --help`: usage, summary, the command's options and the global ones. */
export function commandHelp(command: CommandSpec): string {
  const own = command.options ?? {};
  // A command option may shadow a global one of the same name (none do today); list it once.
  const globals = Object.fromEntries(Object.entries(GLOBAL_OPTIONS).filter(([name]) => !(name in own)));
  return [
    `Usage: quiver ${[...command.path, command.usage].filter(Boolean).join(' ')}`,
    '',
    command.summary,
    '',
    ...(Object.keys(own).length > 0 ? ['Options:', ...columns(optionRows(own)), ''] : []),
    'Global options:',
    ...columns(optionRows(globals)),
    '',
  ].join('\n');
}
