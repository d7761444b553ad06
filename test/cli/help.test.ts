/**
 * `--help` everywhere: every registered command and every group of commands answers it with
 * exit 0, listing subcommands with their summaries and options with their descriptions and
 * defaults (issue #15). Built from the real command list, so a new command is covered as soon
 * as it is registered.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { commands } from '../../src/cli/commands/index.ts';
import { GLOBAL_OPTIONS, type CommandOption } from '../../src/cli/command.ts';
import { runBinary, runInProcess } from '../helpers/cli.ts';

/** Every proper prefix of a command path that has commands under it: `plugin`, `plugin secret`, … */
function groups(): string[][] {
  const found = new Map<string, string[]>();
  for (const command of commands) {
    for (let length = 1; length < command.path.length; length++) found.set(command.path.slice(0, length).join(' '), command.path.slice(0, length));
  }
  return [...found.values()];
}

/** The default as help must show it, if any. */
function expectedDefault(option: CommandOption): string | undefined {
  if (option.defaultHelp !== undefined) return option.defaultHelp;
  return option.default === undefined || option.default === false ? undefined : String(option.default);
}

/** The help line of option `name`: `--name`, then its description on the same or the next line. */
function assertOptionDocumented(help: string, name: string, option: CommandOption, where: string): void {
  // The option's own line (not the usage line): indented, maybe after its short form.
  const at = help.search(new RegExp(`\\n {2}(?:-\\w, )?--${name}(?![\\w-])`));
  assert.ok(at >= 0, `${where}: --${name} is not listed`);
  const entry = help.slice(at, help.indexOf('\n  --', at + 2) < 0 ? undefined : help.indexOf('\n  --', at + 2));
  assert.ok(option.description.trim().length > 0, `${where}: --${name} has an empty description`);
  assert.ok(entry.includes(option.description), `${where}: --${name} is listed without its description`);
  const fallback = expectedDefault(option);
  if (fallback !== undefined) assert.ok(entry.includes(`default: ${fallback}`), `${where}: --${name} does not show its default ${fallback}`);
  if (option.multiple) assert.ok(entry.includes('repeatable'), `${where}: --${name} does not say it repeats`);
}

describe('quiver --help', () => {
  it('lists every command with its summary, the global options and the exit codes', async () => {
    const { code, stdout } = await runInProcess(['--help']);
    assert.equal(code, 0);
    for (const command of commands) {
      assert.ok(stdout.includes(`${command.path.join(' ')}`) && stdout.includes(command.summary), `${command.path.join(' ')} is missing`);
    }
    for (const [name, option] of Object.entries(GLOBAL_OPTIONS)) assertOptionDocumented(stdout, name, option, 'quiver --help');
    assert.match(stdout, /Exit codes: 0 ok/);
  });

  it('every command answers --help with exit 0, its usage, and each option with its description and default', async () => {
    assert.ok(commands.length >= 30, `only ${commands.length} commands registered`);
    for (const command of commands) {
      const where = `quiver ${command.path.join(' ')} --help`;
      const { code, stdout, stderr } = await runInProcess([...command.path, '--help']);
      assert.equal(code, 0, `${where}: ${stderr}`);
      assert.ok(stdout.startsWith(`Usage: quiver ${command.path.join(' ')}`), where);
      assert.ok(stdout.includes(command.summary), `${where}: no summary`);
      for (const [name, option] of Object.entries(command.options ?? {})) assertOptionDocumented(stdout, name, option, where);
      for (const [name, option] of Object.entries(GLOBAL_OPTIONS)) assertOptionDocumented(stdout, name, option, where);
    }
  });

  it('every group answers --help (and its bare name) with its subcommands and their summaries', async () => {
    const all = groups();
    assert.ok(all.some((words) => words.join(' ') === 'plugin') && all.some((words) => words.join(' ') === 'plugin secret'));
    for (const words of all) {
      for (const argv of [[...words, '--help'], [...words, '-h'], words]) {
        const { code, stdout, stderr } = await runInProcess(argv);
        assert.equal(code, 0, `quiver ${argv.join(' ')}: ${stderr}`);
        assert.ok(stdout.startsWith(`Usage: quiver ${words.join(' ')} <command>`), `quiver ${argv.join(' ')}`);
        for (const command of commands.filter((c) => words.every((word, index) => c.path[index] === word))) {
          const rest = command.path.slice(words.length).join(' ');
          assert.match(stdout, new RegExp(`\\n  ${rest.replace(/ /g, ' ')} +${command.summary.slice(0, 30).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), `quiver ${argv.join(' ')}: ${rest}`);
        }
      }
    }
  });

  it('`quiver help CMD` is `quiver CMD --help`', async () => {
    const viaHelp = await runInProcess(['help', 'plugin', 'add']);
    const viaFlag = await runInProcess(['plugin', 'add', '--help']);
    assert.equal(viaHelp.code, 0);
    assert.equal(viaHelp.stdout, viaFlag.stdout);
    const group = await runInProcess(['help', 'keys']);
    assert.equal(group.code, 0);
    assert.match(group.stdout, /Usage: quiver keys <command>/);
  });

  it('an unknown subcommand is a usage error that lists the group; an unknown word points at --help', async () => {
    const typo = await runInProcess(['plugin', 'lst']);
    assert.equal(typo.code, 2);
    assert.equal(typo.stdout, '');
    assert.match(typo.stderr, /unknown command 'plugin lst'/);
    assert.match(typo.stderr, /\n {2}list +List installed plugins/);
    const withFlag = await runInProcess(['plugin', '--all']);
    assert.equal(withFlag.code, 2);
    assert.match(withFlag.stderr, /Usage: quiver plugin <command>/);
    const unknown = await runInProcess(['frobnicate', '--help']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'frobnicate --help'\. Run 'quiver --help'/);
  });

  it('a bad option prints the command help with descriptions, exit 2', async () => {
    const { code, stderr } = await runInProcess(['tools', 'list', '--bogus']);
    assert.equal(code, 2);
    assert.match(stderr, /Unknown option '--bogus'/);
    assert.match(stderr, /--limit N +at most N tools \(default: 50\)/);
  });

  it('an option cannot be declared without a description (type check)', () => {
    // @ts-expect-error description is required on every command option
    const undocumented: CommandOption = { type: 'string' };
    assert.equal(undocumented.description, undefined);
  });

  it('the binary answers `quiver plugin --help` out of process', async () => {
    const { code, stdout } = await runBinary(['plugin', '--help']);
    assert.equal(code, 0);
    assert.match(stdout, /\n {2}add +Install a plugin/);
  });
});
