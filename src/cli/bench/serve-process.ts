/**
 * @module cli/bench/serve-process
 * Real `quiver` processes for the start-up and memory benches (issue #28): a `quiver serve` on a
 * data folder, started and stopped, with its time to ready, its CPU time to ready and its
 * resident memory read from /proc; and a one-shot `quiver` command with its wall time, CPU time
 * and peak RSS (the child reports its own `process.resourceUsage()` at exit).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../../bin/quiver.mjs', import.meta.url));

/** Clock ticks per second of /proc/<pid>/stat on Linux (USER_HZ, 100 on every mainstream kernel). */
const USER_HZ = 100;

/** Loaded with `--import` into a one-shot child: its CPU time and peak RSS on stderr at exit. */
const USAGE_REPORTER = `data:text/javascript,${encodeURIComponent(
  "process.on('exit', () => { const u = process.resourceUsage(); process.stderr.write('\\nQUIVER_BENCH_USAGE ' + JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKb: u.maxRSS }) + '\\n'); });",
)}`;

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** min / median / max of a series, rounded. */
export function spread(values: readonly number[], digits = 0): { min: number; median: number; max: number; runs: number } {
  const round = (value: number) => Math.round(value * 10 ** digits) / 10 ** digits;
  return { min: round(Math.min(...values)), median: round(median(values)), max: round(Math.max(...values)), runs: values.length };
}

/** Resident memory of a running process from /proc (MB): now and its peak. Undefined off Linux. */
export function processRss(pid: number): { rssMb: number; peakMb: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: Math.round(kb('VmRSS') / 102.4) / 10, peakMb: Math.round(kb('VmHWM') / 102.4) / 10 };
}

/** CPU time (user + system) a running process has used, ms, from /proc. Undefined off Linux. */
function processCpuMs(pid: number): number | undefined {
  try {
    // The fields after the command name (which may hold spaces): state is the first, utime the 12th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return undefined;
  }
}

/** A running `quiver serve`. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** From spawning the process to the first 200 of /readyz (the database answers, migrations applied). */
  readyMs: number;
  /** CPU time the process had used when /readyz first answered 200 (Linux). */
  cpuToReadyMs: number | undefined;
  stop(): Promise<void>;
}

/**
 * Starts `quiver serve --http 127.0.0.1:0` on `dataDir` with `QUIVER_HOME=home` and waits until
 * /readyz answers 200 (issue #28: ready, not merely alive as /healthz says).
 */
export async function startServeProcess(dataDir: string, home: string, extraEnv: Record<string, string> = {}): Promise<ServeProcess> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve', '--json', '--data', dataDir, '--http', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', QUIVER_HOME: home, ...extraEnv },
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGTERM');
    await closed;
  };
  try {
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-2000)));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk) => {
        out += chunk;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { url: string }).url);
      });
      child.once('close', (code) => reject(new Error(`quiver serve exited with ${code}: ${stderr}`)));
    });
    for (;;) {
      const response = await fetch(`${url}/readyz`).catch(() => undefined);
      if (response?.ok) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const readyMs = performance.now() - started;
    return { child, url, readyMs, cpuToReadyMs: processCpuMs(child.pid!), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What a one-shot `quiver` command cost. */
export interface CommandRun {
  exitCode: number | null;
  stdout: string;
  wallMs: number;
  cpuMs: number;
  maxRssMb: number;
}

/** Runs `quiver ARGS` to its end; its CPU time and peak RSS come from the child itself. */
export async function runQuiver(args: string[], env: Record<string, string>): Promise<CommandRun> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', USAGE_REPORTER, BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exitCode = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const wallMs = performance.now() - started;
  const usage = /QUIVER_BENCH_USAGE (\{.*\})/.exec(stderr)?.[1];
  if (usage === undefined) throw new Error(`quiver ${args.join(' ')} reported no usage (exit ${exitCode}): ${stderr.slice(-500)}`);
  const { cpuMs, maxRssKb } = JSON.parse(usage) as { cpuMs: number; maxRssKb: number };
  return { exitCode, stdout, wallMs, cpuMs, maxRssMb: Math.round(maxRssKb / 102.4) / 10 };
}
