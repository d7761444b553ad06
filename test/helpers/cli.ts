/**
 * @module test/helpers/cli
 * Running the real `quiver` binary out of process, and in-process through runCli.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/run-cli.ts';
import { commands } from '../../src/cli/commands/index.ts';

export const QUIVER_BIN = fileURLToPath(new URL('../../bin/quiver.mjs', import.meta.url));

/** Runs the CLI in-process and captures its output. */
export async function runInProcess(argv: string[], env: Record<string, string | undefined> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    argv,
    commands,
    { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) },
    { HOME: process.env.HOME, QUIVER_LOG_LEVEL: 'silent', ...env },
  );
  return { code, stdout, stderr };
}

/** Runs `node ARGS` as a child process to completion (killed and rejected after `timeoutMs`). */
export function runNode(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 180_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `quiver ARGS` as a child process to completion. */
export function runBinary(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 180_000) {
  return runNode([QUIVER_BIN, ...args], env, timeoutMs);
}

/** Starts a long-running `quiver serve …` and resolves once it printed its listening line. */
export function startServe(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 180_000) {
  return new Promise<{ child: ChildProcess; url: string; stderr: () => string; stdout: () => string }>((resolve, reject) => {
    const child = spawn(process.execPath, [QUIVER_BIN, 'serve', '--json', ...args], {
      env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start; stderr: ${stderr}`));
    }, timeoutMs);
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      stdout += d;
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve({ child, url: (JSON.parse(line) as { url: string }).url, stderr: () => stderr, stdout: () => stdout });
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}; stderr: ${stderr}`));
    });
  });
}

/** Stops a child with SIGTERM and waits for it. */
export async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const code = await closed;
  clearTimeout(timer);
  return code;
}
