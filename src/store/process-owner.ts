/**
 * @module store/process-owner
 * Who owns a lock, a lease or a staging folder, told precisely enough to decide after a crash
 * whether the owner is gone (issue #18 finding 8). A bare pid is not enough: after `kill -9`
 * the process may linger as a zombie (it answers `kill(pid, 0)` until its parent reaps it), and
 * a pid is reused by unrelated processes. So an owner records its host, the kernel's boot id and
 * the process start time (field 22 of /proc/<pid>/stat, in clock ticks since boot); the owner is
 * alive only if all of them still match and the process is not a zombie. Off Linux (no /proc)
 * the check falls back to `kill(pid, 0)`.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';

/** The identity of a process, as stored beside what it owns. */
export const processOwnerSchema = z.object({
  host: z.string(),
  pid: z.number().int().positive(),
  bootId: z.string().optional(),
  /** Start time of the process in clock ticks since boot (Linux). */
  startTicks: z.number().int().nonnegative().optional(),
});
export type ProcessOwner = z.output<typeof processOwnerSchema>;

/** What is known of an owner: alive, gone, or on another host (cannot be checked from here). */
export type OwnerState = 'alive' | 'dead' | 'elsewhere';

function readBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** State letter and start time of a process from /proc/<pid>/stat; undefined without /proc or the process. */
export function readProcessStat(pid: number): { state: string; startTicks: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTicks = Number(fields[19]);
  if (state === undefined || !Number.isFinite(startTicks)) return undefined;
  return { state, startTicks };
}

/** True when `owner` is this very process (same pid and start time on this host). */
export function isCurrentProcess(owner: ProcessOwner): boolean {
  const self = processOwner();
  return self !== undefined && owner.pid === self.pid && owner.host === self.host && (owner.startTicks === undefined || owner.startTicks === self.startTicks);
}

/** The identity of process `pid` on this host (default: this process); undefined if it does not exist. */
export function processOwner(pid: number = process.pid): ProcessOwner | undefined {
  const stat = readProcessStat(pid);
  const bootId = readBootId();
  if (stat === undefined) {
    if (process.platform === 'linux') return undefined;
    return { host: hostname(), pid };
  }
  return { host: hostname(), pid, startTicks: stat.startTicks, ...(bootId === undefined ? {} : { bootId }) };
}

function signalAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `owner` still runs: a zombie, a reused pid or a previous boot count as dead. An owner
 * recorded by another host name is `elsewhere` (its pid means nothing here) unless
 * `checkOtherHosts` is set: the data-folder lock sets it, because a container re-created on
 * the same volume gets a new host name while its predecessor is certainly gone, and the start
 * time tells a reused pid apart anyway.
 */
export function ownerState(owner: ProcessOwner, options: { checkOtherHosts?: boolean } = {}): OwnerState {
  if (owner.host !== hostname() && options.checkOtherHosts !== true) return 'elsewhere';
  const bootId = readBootId();
  if (owner.bootId !== undefined && bootId !== undefined && owner.bootId !== bootId) return 'dead';
  const stat = readProcessStat(owner.pid);
  if (stat === undefined) return process.platform === 'linux' ? 'dead' : signalAlive(owner.pid) ? 'alive' : 'dead';
  // Z: exited, waiting to be reaped; X: being torn down. Neither holds anything any more.
  if (stat.state === 'Z' || stat.state === 'X') return 'dead';
  if (owner.startTicks !== undefined && owner.startTicks !== stat.startTicks) return 'dead';
  return 'alive';
}
