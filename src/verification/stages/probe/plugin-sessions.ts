/**
 * @module verification/stages/probe/plugin-sessions
 * The plugin starts of one probe run: the first start, and restarts after a crash (at most
 * `maxRestarts`) so that one crashing tool does not hide how the others behave. Each start's
 * resources, network counters and writes are added up when it stops; every state folder is
 * removed at the end.
 */
import type { HostCapabilities } from '../../../runtime/host-detection.ts';
import type { UpstreamSpecInput } from '../../../runtime/types.ts';
import { removeStateRoot, startSandboxed, type SandboxedPlugin } from './sandboxed-start.ts';
import { auditWrites } from './write-audit.ts';
import type { ProbeNetwork, ProbeResources, ProbeWrites } from './types.ts';

/** Totals over every start. */
export interface SessionTotals {
  starts: number;
  resources: ProbeResources;
  network: ProbeNetwork;
  writes: ProbeWrites;
}

/** The starts of one run. */
export interface PluginSessions {
  /** The running plugin, restarting it when it crashed and restarts are left; undefined otherwise. */
  current(): Promise<SandboxedPlugin | undefined>;
  /** Stops whatever runs, audits and removes every state folder, returns the totals. */
  finish(): Promise<SessionTotals>;
}

/** Options of the sessions. */
export interface SessionOptions {
  host: HostCapabilities;
  startTimeoutMs: number;
  maxRestarts: number;
  signal?: AbortSignal;
}

/** Wraps the first (already started) plugin. */
export function createPluginSessions(first: SandboxedPlugin, launch: UpstreamSpecInput & { transport: 'stdio' }, options: SessionOptions): PluginSessions {
  const stopped: SandboxedPlugin[] = [];
  let active: SandboxedPlugin | undefined = first;
  let starts = 1;
  let switching: Promise<SandboxedPlugin | undefined> | undefined;
  const resources: ProbeResources = { source: options.host.cgroups.kind === 'none' ? 'none' : 'cgroup', spawnedProcesses: 0, oomKills: 0 };
  const network: ProbeNetwork = { source: 'none', tcpConnects: 0, udpDatagrams: 0, noRoute: 0, refused: [] };
  const writes: ProbeWrites = { codeFolder: first.launch.codeFolder ?? 'none', written: [], deleted: [], stateFiles: 0 };

  async function retire(plugin: SandboxedPlugin): Promise<void> {
    const readings = await plugin.stop();
    stopped.push(plugin);
    for (const destination of plugin.refused()) {
      const known = network.refused.some((entry) => entry.host === destination.host && entry.port === destination.port);
      if (!known && network.refused.length < 50) network.refused.push(destination);
    }
    const sample = readings.resources;
    if (sample) {
      if (sample.peakMemoryBytes !== undefined) resources.peakMemoryBytes = Math.max(resources.peakMemoryBytes ?? 0, sample.peakMemoryBytes);
      if (sample.memoryLimitBytes !== undefined) resources.memoryLimitBytes = sample.memoryLimitBytes;
      if (sample.cpuMs !== undefined) resources.cpuMs = (resources.cpuMs ?? 0) + sample.cpuMs;
      resources.spawnedProcesses += sample.spawnedProcesses;
      resources.oomKills += sample.oomKills;
    }
    if (readings.network) {
      network.source = 'netns-counters';
      network.tcpConnects += readings.network.tcpConnects;
      network.udpDatagrams += readings.network.udpDatagrams;
      network.noRoute += readings.network.noRoute;
    }
    const audit = auditWrites(plugin.stateDir);
    writes.written = [...new Set([...writes.written, ...audit.written])];
    writes.deleted = [...new Set([...writes.deleted, ...audit.deleted])];
    writes.stateFiles += audit.stateFiles;
  }

  async function restart(): Promise<SandboxedPlugin | undefined> {
    if (active) await retire(active);
    active = undefined;
    if (starts - 1 >= options.maxRestarts || options.signal?.aborted) return undefined;
    starts += 1;
    try {
      // Straight to the era the first start found (no second `server/discover` probe).
      active = await startSandboxed(launch, { host: options.host, startTimeoutMs: options.startTimeoutMs, era: first.era, ...(options.signal ? { signal: options.signal } : {}) });
    } catch {
      active = undefined;
    }
    return active;
  }

  return {
    async current() {
      if (switching) return switching;
      if (active?.isRunning()) return active;
      if (!active) return undefined;
      switching = restart().finally(() => {
        switching = undefined;
      });
      return switching;
    },
    async finish() {
      await switching;
      if (active) await retire(active);
      active = undefined;
      for (const plugin of stopped) removeStateRoot(plugin.stateDir);
      return { starts, resources, network, writes };
    },
  };
}
