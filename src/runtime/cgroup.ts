/**
 * @module runtime/cgroup
 * CPU, memory and process-count limits through Linux control groups, v2 (unified) or v1
 * (one hierarchy per controller), whichever the host offers. A plugin's cgroup is created
 * as a child of Quiver's own cgroup, so Quiver's limits still bound its plugins. The
 * launcher puts the plugin in its cgroup before it execs (see `sandbox.ts`), so nothing it
 * forks escapes. Where no writable cgroup exists, `detectCgroups()` says why and callers
 * fall back (a Node heap flag) and report the limitation.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, signalProcess, sleep } from './process-tree.ts';
import type { ResourceLimits } from './types.ts';

/** A cgroup made for one plugin process tree. */
export interface CgroupHandle {
  /** Files a process writes its pid into to join (one per v1 hierarchy, one for v2). */
  procsFiles: string[];
  /** Pids currently in the cgroup. */
  pids(): number[];
  /** How many times the kernel's OOM killer fired inside. */
  oomKills(): number;
  /** Kills every process inside and waits (up to `timeoutMs`) until it is empty. */
  killAll(timeoutMs?: number): Promise<void>;
  /** Removes the cgroup (after killAll). */
  remove(): Promise<void>;
}

/** What the host offers. */
export interface CgroupSupport {
  kind: 'v2' | 'v1' | 'none';
  /** Why cgroups are not used, when `kind` is 'none'. */
  reason?: string;
  /** Creates a cgroup named `name` with `limits`. */
  create(name: string, limits: Required<ResourceLimits>): CgroupHandle;
  /**
   * Removes empty cgroups left by a Quiver that died without cleaning up: names are
   * `quiver-<pid>-…`, and only those whose pid is gone are touched (rmdir fails on non-empty ones).
   */
  sweepStale(): number;
}

/** The cgroup name for one plugin process of this Quiver process. */
export function cgroupName(supervisorId: string, instanceId: number): string {
  return `quiver-${process.pid}-${supervisorId}-${instanceId}`;
}

function sweep(bases: string[]): number {
  let removed = 0;
  for (const base of new Set(bases)) {
    let names: string[];
    try {
      names = readdirSync(base);
    } catch {
      continue;
    }
    for (const name of names) {
      const match = /^quiver-(\d+)-/.exec(name);
      if (!match || isAlive(Number(match[1]))) continue;
      try {
        rmdirSync(join(base, name));
        removed += 1;
      } catch {
        // still has processes, or not ours to remove
      }
    }
  }
  return removed;
}

interface Mount {
  point: string;
  type: string;
  superOptions: string[];
}

function readMounts(): Mount[] {
  const text = readFileSync('/proc/self/mountinfo', 'utf8');
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const point = left.split(' ')[4];
    const [type, , options] = right.split(' ');
    if (point && type) mounts.push({ point, type, superOptions: (options ?? '').split(',') });
  }
  return mounts;
}

function readSelfCgroups(): Array<{ controllers: string[]; path: string }> {
  return readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, controllers = '', ...rest] = line.split(':');
      return { controllers: controllers.split(',').filter(Boolean), path: rest.join(':') };
    });
}

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

function readPids(file: string): number[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function handleFor(directories: string[], oomFile: string | undefined, killFile: string | undefined): CgroupHandle {
  const procsFiles = directories.map((directory) => join(directory, 'cgroup.procs'));
  const pids = (): number[] => [...new Set(procsFiles.flatMap(readPids))];
  return {
    procsFiles,
    pids,
    oomKills() {
      if (!oomFile) return 0;
      try {
        const match = /oom_kill (\d+)/.exec(readFileSync(oomFile, 'utf8'));
        return match ? Number(match[1]) : 0;
      } catch {
        return 0;
      }
    },
    async killAll(timeoutMs = 3_000) {
      const deadline = Date.now() + timeoutMs;
      if (killFile) tryWrite(killFile, '1');
      for (;;) {
        const inside = pids();
        if (inside.length === 0 || Date.now() > deadline) return;
        for (const pid of inside) signalProcess(pid, 'SIGKILL');
        await sleep(10);
      }
    },
    async remove() {
      for (let attempt = 0; attempt < 50; attempt += 1) {
        let left = 0;
        for (const directory of directories) {
          if (!existsSync(directory)) continue;
          try {
            rmdirSync(directory);
          } catch {
            left += 1;
          }
        }
        if (left === 0) return;
        await sleep(20);
      }
    },
  };
}

function unavailable(reason: string): CgroupSupport {
  return {
    kind: 'none',
    reason,
    create() {
      throw new Error(`cgroups are unavailable: ${reason}`);
    },
    sweepStale: () => 0,
  };
}

/** Finds a writable cgroup hierarchy for memory, pids and cpu limits, or says why there is none. */
export function detectCgroups(): CgroupSupport {
  let mounts: Mount[];
  let own: Array<{ controllers: string[]; path: string }>;
  try {
    mounts = readMounts();
    own = readSelfCgroups();
  } catch (error) {
    return unavailable(`cannot read /proc: ${(error as Error).message}`);
  }
  const required = ['memory', 'pids', 'cpu'];

  // cgroup v2 with the controllers delegated to our cgroup's children.
  const unified = mounts.find((mount) => mount.type === 'cgroup2');
  const unifiedPath = own.find((entry) => entry.controllers.length === 0)?.path;
  if (unified && unifiedPath !== undefined) {
    const base = join(unified.point, unifiedPath);
    let available: string[] = [];
    try {
      available = readFileSync(join(base, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    } catch {
      // not a v2 hierarchy with controllers (hybrid mode)
    }
    if (required.every((controller) => available.includes(controller))) {
      const subtree = join(base, 'cgroup.subtree_control');
      const enabled = (): boolean => {
        try {
          const current = readFileSync(subtree, 'utf8');
          return required.every((controller) => current.includes(controller));
        } catch {
          return false;
        }
      };
      if (enabled() || tryWrite(subtree, required.map((controller) => `+${controller}`).join(' ')) || enabled()) {
        return {
          kind: 'v2',
          sweepStale: () => sweep([base]),
          create(name, limits) {
            const directory = join(base, name);
            mkdirSync(directory, { recursive: true });
            writeFileSync(join(directory, 'memory.max'), String(limits.memoryMb * 1024 * 1024));
            tryWrite(join(directory, 'memory.swap.max'), '0');
            writeFileSync(join(directory, 'pids.max'), String(limits.pids));
            writeFileSync(join(directory, 'cpu.max'), `${Math.round(limits.cpus * 100_000)} 100000`);
            const killFile = join(directory, 'cgroup.kill');
            return handleFor([directory], join(directory, 'memory.events'), existsSync(killFile) ? killFile : undefined);
          },
        };
      }
    }
  }

  // cgroup v1: one hierarchy per controller, each with our own path in it.
  const bases: Record<string, string> = {};
  for (const controller of required) {
    const mount = mounts.find((candidate) => candidate.type === 'cgroup' && candidate.superOptions.includes(controller));
    const path = own.find((entry) => entry.controllers.includes(controller))?.path;
    if (!mount || path === undefined) return unavailable(`no cgroup v2 controllers delegated and no cgroup v1 '${controller}' hierarchy`);
    bases[controller] = join(mount.point, path);
  }
  const probe = join(bases.pids!, `quiver-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
  } catch (error) {
    return unavailable(`cannot create cgroups under ${bases.pids}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return {
    kind: 'v1',
    sweepStale: () => sweep(Object.values(bases)),
    create(name, limits) {
      const memory = join(bases.memory!, name);
      const pids = join(bases.pids!, name);
      const cpu = join(bases.cpu!, name);
      const created = [...new Set([memory, pids, cpu])];
      for (const directory of created) mkdirSync(directory, { recursive: true });
      const bytes = String(limits.memoryMb * 1024 * 1024);
      writeFileSync(join(memory, 'memory.limit_in_bytes'), bytes);
      // Without swap accounting this file is missing; the memory limit alone still holds.
      tryWrite(join(memory, 'memory.memsw.limit_in_bytes'), bytes);
      writeFileSync(join(pids, 'pids.max'), String(limits.pids));
      writeFileSync(join(cpu, 'cpu.cfs_period_us'), '100000');
      writeFileSync(join(cpu, 'cpu.cfs_quota_us'), String(Math.round(limits.cpus * 100_000)));
      return handleFor(created, join(memory, 'memory.oom_control'), undefined);
    },
  };
}
