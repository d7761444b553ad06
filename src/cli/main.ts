/**
 * @module cli/main
 * The binary's entry: wires process I/O into `runCli`. Kept thin so the CLI is testable
 * in-process.
 */
import { runCli } from './run-cli.ts';
import { commands } from './commands/index.ts';

/** Runs the CLI for `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  return runCli(
    argv,
    commands,
    { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) },
    process.env,
  );
}
