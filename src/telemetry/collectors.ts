/**
 * @module telemetry/collectors
 * Scrape-time metrics: values other parts already keep, read when `/metrics` is asked rather
 * than pushed on every change — the supervisor's status (breaker states, plugin states, live
 * processes), the selection caches' own hit and miss totals, the gateway's live sessions,
 * the call-event recorder's losses, and the process (memory, heap, CPU).
 */
import type { QuiverInstruments } from './quiver-metrics.ts';

/** The breaker states the metrics label (the runtime's breakers report these). */
const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;
type BreakerState = (typeof BREAKER_STATES)[number];

/**
 * What the metrics read of one plugin's health: the slice of the supervisor's `PluginHealth`
 * they use, declared here so telemetry sits below the runtime it observes (issue #28).
 */
export interface PluginHealthReading {
  pluginName: string;
  state: string;
  breaker: BreakerState;
  toolBreakers: Record<string, BreakerState>;
}

/** Where the scrape-time values come from; each optional (a one-shot command has no gateway). */
export interface MetricSources {
  supervisor?: { health(): PluginHealthReading[]; processes(): unknown[] };
  /** Cache totals by cache name (`SelectionEngine.cacheStats`). */
  caches?: () => Record<string, { hits: number; misses: number; size: number }>;
  /** Live MCP sessions, per gateway front (HTTP, stdio) that registered one. */
  sessions?: Array<() => number>;
  callEvents?: () => { dropped: number; failed: number };
}

function collectSupervisor(instruments: QuiverInstruments, health: PluginHealthReading[], processes: number): void {
  instruments.pluginProcesses.set(undefined, processes);
  instruments.plugins.reset();
  instruments.breakers.reset();
  instruments.pluginBreakerState.reset();
  for (const state of BREAKER_STATES) {
    instruments.breakers.set({ scope: 'plugin', state }, 0);
    instruments.breakers.set({ scope: 'tool', state }, 0);
  }
  // Versions of one plugin share its name: each state any version is in shows 1.
  const statesByPlugin = new Map<string, Set<BreakerState>>();
  for (const plugin of health) {
    instruments.plugins.inc({ state: plugin.state });
    instruments.breakers.inc({ scope: 'plugin', state: plugin.breaker });
    for (const state of Object.values(plugin.toolBreakers)) instruments.breakers.inc({ scope: 'tool', state });
    const states = statesByPlugin.get(plugin.pluginName) ?? new Set<BreakerState>();
    states.add(plugin.breaker);
    statesByPlugin.set(plugin.pluginName, states);
  }
  for (const [plugin, states] of statesByPlugin) {
    for (const state of BREAKER_STATES) instruments.pluginBreakerState.set({ plugin, state }, states.has(state) ? 1 : 0);
  }
}

/** Registers the collectors of `sources` on the registry behind `instruments`. */
export function collectFrom(instruments: QuiverInstruments, sources: MetricSources): () => void {
  return () => {
    if (sources.supervisor) collectSupervisor(instruments, sources.supervisor.health(), sources.supervisor.processes().length);
    if (sources.caches) {
      for (const [cache, stats] of Object.entries(sources.caches())) {
        instruments.cacheHits.setTotal({ cache }, stats.hits);
        instruments.cacheMisses.setTotal({ cache }, stats.misses);
        instruments.cacheEntries.set({ cache }, stats.size);
      }
    }
    if (sources.sessions) instruments.sessions.set(undefined, sources.sessions.reduce((sum, count) => sum + count(), 0));
    if (sources.callEvents) {
      const stats = sources.callEvents();
      instruments.callEventsDropped.setTotal({ reason: 'queue_full' }, stats.dropped);
      instruments.callEventsDropped.setTotal({ reason: 'insert_failed' }, stats.failed);
    }
  };
}

/** The process's own figures: resident memory, heap, CPU time. */
export function collectProcess(instruments: QuiverInstruments): void {
  const memory = process.memoryUsage();
  instruments.processMemory.set(undefined, memory.rss);
  instruments.processHeap.set(undefined, memory.heapUsed);
  const cpu = process.cpuUsage();
  instruments.processCpu.setTotal(undefined, (cpu.user + cpu.system) / 1e6);
}
