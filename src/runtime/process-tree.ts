/**
 * @module runtime/process-tree
 * Reading the Linux process table from /proc and killing whole process trees. A plugin is
 * started as the leader of its own process group (and, where bubblewrap exists, inside its
 * own pid namespace), so stopping it kills every process it spawned, not just the first.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** One row of the process table. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** Kernel state letter: R, S, D, Z (zombie), T… */
  state: string;
  command: string;
}

/** Reads /proc/<pid>/stat; undefined when the process is gone. */
export function readProcess(pid: number): ProcessInfo | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command sits in parentheses and may itself contain spaces and parentheses.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    command: text.slice(open + 1, close),
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
  };
}

/** Every process visible in /proc. */
export function listProcesses(): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = readProcess(Number(entry));
    if (info) out.push(info);
  }
  return out;
}

/** The pids of every live (non-zombie) descendant of `pid`. */
export function descendantsOf(pid: number, table: ProcessInfo[] = listProcesses()): number[] {
  const children = new Map<number, number[]>();
  for (const info of table) {
    if (info.state === 'Z' || info.state === 'X') continue;
    const list = children.get(info.ppid) ?? [];
    list.push(info.pid);
    children.set(info.ppid, list);
  }
  const out: number[] = [];
  const stack = [...(children.get(pid) ?? [])];
  while (stack.length > 0) {
    const next = stack.pop()!;
    out.push(next);
    stack.push(...(children.get(next) ?? []));
  }
  return out;
}

/** True when `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  const info = readProcess(pid);
  return info !== undefined && info.state !== 'Z' && info.state !== 'X';
}

/** Sends `signal` to the process group `pgid`; false when the group is already gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal` to one pid; false when it is already gone. */
export function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Live processes whose environment holds `name=value`. The supervisor marks every plugin
 * process it starts this way, which finds orphans even after they were re-parented to init.
 */
export function processesWithEnv(name: string, value: string): number[] {
  const needle = Buffer.from(`${name}=${value}\0`);
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.includes(needle) && isAlive(pid)) out.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Waits for `promise` at most `ms` (its timer is cleared as soon as the promise settles). */
export async function waitAtMost(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!promise) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/** Polls until none of `pids` is alive or `timeoutMs` passes; returns the survivors. */
export async function waitForExit(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(10);
    alive = alive.filter(isAlive);
  }
  return alive;
}
