/**
 * @module cli/main
 * The binary's entry: wires process I/O into `runCli`. Kept thin so the CLI is testable
 * in-process.
 */
import { runCli } from './run-cli.ts';
import { commands } from './commands/index.ts';

/** All of standard input, or undefined when it is a terminal (nothing piped). */
async function readProcessStdin(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs the CLI for `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  return runCli(
    argv,
    commands,
    { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text), stdin: readProcessStdin },
    process.env,
  );
}
