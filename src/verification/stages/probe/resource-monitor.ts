/**
 * @module verification/stages/probe/resource-monitor
 * Peak memory, CPU time and spawned processes of one sandboxed plugin start, read from its
 * cgroup (issue #10: "peak memory and CPU from the cgroup"):
 * - memory: `memory.peak` (v2) or `memory.max_usage_in_bytes` (v1);
 * - CPU: `cpu.stat` `usage_usec` (v2) or `cpuacct.usage` (v1 when cpu and cpuacct share a
 *   hierarchy); otherwise the sum of user + system ticks of every process seen in the cgroup
 *   (children it waited for included), sampled from /proc — a lower bound;
 * - processes: the cgroup also holds the launch chain (sh, setpriv, unshare with the overlay's
 *   find/xargs/mkdir, bwrap and its pid-1), so the baseline is taken once the handshake is done;
 *   spawned = new processes seen in `cgroup.procs` samples after it (a process living less
 *   than one sample interval can be missed; `pids.peak` is no help: it counts threads).
 * `finish()` must run before the cgroup is removed (before the transport closes).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CgroupHandle } from '../../../runtime/cgroup.ts';

/** What one start used. */
export interface ResourceSample {
  peakMemoryBytes?: number;
  memoryLimitBytes?: number;
  cpuMs?: number;
  spawnedProcesses: number;
  oomKills: number;
}

/** A running monitor of one cgroup. */
export interface ResourceMonitor {
  /** Marks the end of the launch chain: processes alive now are the plugin itself. */
  markBaseline(): void;
  /** Stops sampling and reads the peaks (idempotent). */
  finish(): ResourceSample;
}

const TICKS_PER_SECOND = 100;

function readNumber(file: string): number | undefined {
  try {
    const value = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function readKey(file: string, key: string): number | undefined {
  try {
    const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** user + system ticks of a process and of the children it waited for; undefined when gone. */
function cpuTicks(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // Fields 14–17 of proc(5) (utime stime cutime cstime) are 11–14 after the command.
    return [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index] ?? 0), 0);
  } catch {
    return undefined;
  }
}

function firstDefined(directories: string[], name: string, read: (file: string) => number | undefined): number | undefined {
  for (const directory of directories) {
    const value = read(join(directory, name));
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Samples `cgroup` every `intervalMs` until `finish()`. */
export function monitorCgroup(cgroup: CgroupHandle, intervalMs = 50): ResourceMonitor {
  const directories = cgroup.procsFiles.map((file) => dirname(file));
  const ticks = new Map<number, number>();
  let baseline: Set<number> | undefined;
  const spawned = new Set<number>();
  let finished: ResourceSample | undefined;
  const sample = (): void => {
    for (const pid of cgroup.pids()) {
      const used = cpuTicks(pid);
      if (used !== undefined) ticks.set(pid, Math.max(used, ticks.get(pid) ?? 0));
      if (baseline !== undefined && !baseline.has(pid)) spawned.add(pid);
    }
  };
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  sample();
  return {
    markBaseline() {
      sample();
      baseline = new Set(cgroup.pids());
    },
    finish() {
      if (finished) return finished;
      sample();
      clearInterval(timer);
      const usageUsec = firstDefined(directories, 'cpu.stat', (file) => readKey(file, 'usage_usec'));
      const cpuacctNs = firstDefined(directories, 'cpuacct.usage', readNumber);
      const sampledMs = ([...ticks.values()].reduce((sum, value) => sum + value, 0) * 1000) / TICKS_PER_SECOND;
      const cpuMs = usageUsec !== undefined ? usageUsec / 1000 : cpuacctNs !== undefined ? cpuacctNs / 1e6 : sampledMs;
      const peakMemoryBytes = firstDefined(directories, 'memory.peak', readNumber) ?? firstDefined(directories, 'memory.max_usage_in_bytes', readNumber);
      const memoryLimitBytes = firstDefined(directories, 'memory.max', readNumber) ?? firstDefined(directories, 'memory.limit_in_bytes', readNumber);
      finished = {
        ...(peakMemoryBytes !== undefined ? { peakMemoryBytes } : {}),
        ...(memoryLimitBytes !== undefined ? { memoryLimitBytes } : {}),
        cpuMs: Math.round(cpuMs),
        spawnedProcesses: spawned.size,
        oomKills: cgroup.oomKills(),
      };
      return finished;
    },
  };
}
