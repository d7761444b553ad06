/**
 * @module cli/bench/bench-home
 * What the end-to-end gateway benches share: a throwaway Quiver home with real plugins
 * installed through the real `quiver` binary, the binary itself as a child process, the
 * CPU time a child has used (Linux `/proc`), and percentiles in milliseconds.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJsonText } from '../../core/validation.ts';
import { percentile } from '../../core/stats.ts';

/** The `quiver` binary (compiled build when fresh, else the sources). */
export const QUIVER_BIN = fileURLToPath(new URL('../../../bin/quiver.mjs', import.meta.url));

/** A plugin to install: any `quiver plugin add` source and the name to give it. */
export interface BenchPlugin {
  source: string;
  name: string;
}

/** A throwaway home with plugins installed. */
export interface BenchHome {
  home: string;
  dataDir: string;
  /** Environment that points `quiver` at this home. */
  env: Record<string, string>;
  /** Runs `quiver ARGS` to completion; rejects on a non-zero exit. */
  quiver(args: string[]): Promise<string>;
}

/** Runs `quiver ARGS` in `env` to completion and returns its stdout. */
export function runQuiver(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [QUIVER_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`quiver ${args.slice(0, 2).join(' ')} failed (${code}): ${err.slice(-400)}`))));
  });
}

/** Creates a home, installs `plugins` into it, runs `body`, and removes the home; `extraEnv` (e.g. QUIVER_DATABASE_URL) applies to every command. */
export async function withBenchHome<T>(plugins: readonly BenchPlugin[], body: (home: BenchHome) => Promise<T>, extraEnv: Record<string, string> = {}): Promise<T> {
  const home = mkdtempSync(join(tmpdir(), 'quiver-bench-home-'));
  chmodSync(home, 0o755); // the sandbox user must reach the installed packages
  const dataDir = join(home, 'data');
  // Measured alone: no background verification (issue #10) of the installed plugins running beside it.
  const env = { ...(process.env as Record<string, string>), QUIVER_HOME: home, QUIVER_DATA_DIR: dataDir, QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', ...extraEnv };
  const bench: BenchHome = { home, dataDir, env, quiver: (args) => runQuiver(args, env) };
  try {
    for (const plugin of plugins) await bench.quiver(['plugin', 'add', plugin.source, '--name', plugin.name, '--json']);
    return await body(bench);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** Creates an API key with the `mcp` scope (for an organisation when given); returns the secret. */
export async function createMcpKey(home: BenchHome, name: string, orgId?: string): Promise<string> {
  const out = await home.quiver(['keys', 'create', name, '--scope', 'mcp', ...(orgId ? ['--org', orgId] : []), '--json']);
  return (parseJsonText(out, 'keys create') as { key: string }).key;
}

/** CPU seconds (user + system) a process has used so far, or undefined off Linux. */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    // /proc/PID/stat: fields 14 and 15 (utime, stime) in clock ticks, after the `(comm)` field.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Seconds a process's main thread has spent runnable but waiting for a CPU (Linux
 * `/proc/PID/schedstat`, second field, ns), or undefined off Linux. On a shared machine this
 * is the time a server stalls although nothing in it is blocked.
 */
export function processRunQueueWaitSeconds(pid: number): number | undefined {
  try {
    const waited = Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
    return Number.isFinite(waited) ? waited / 1e9 : undefined;
  } catch {
    return undefined;
  }
}

/** The p-th percentile (0–100) of sorted milliseconds, nearest rank (core/stats), rounded to microseconds; NaN when empty. */
export function percentileMs(sorted: readonly number[], p: number): number {
  return round3(percentile(sorted, p / 100) ?? Number.NaN);
}

/** Rounds to three decimals (milliseconds to microseconds). */
export const round3 = (value: number): number => Math.round(value * 1000) / 1000;
