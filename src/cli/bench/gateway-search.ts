/**
 * @module cli/bench/gateway-search
 * `search_tools` end to end (issue #18: p50 ≤ 2 ms, p99 ≤ 10 ms): an MCP SDK client talking
 * to `quiver serve --stdio` (search mode, production backend, embedded PGlite) in front of
 * real npm MCP servers, timing sequential searches over varied queries. Beside it, the
 * selection engine's own time per selection on the same data folder, in-process, with the
 * same queries and `k`, so the gateway's share of a search is visible. And the machine's share:
 * the server's CPU time and its time waiting for a core during the timed searches, and an
 * idle Node process's event-loop delay over the same window (issue #18: on 2 shared cores the
 * slow 1 % of searches is mostly time the server spent runnable but not running).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openStore } from '../../store/open.ts';
import { createSelectionEngine } from '../../selection/index.ts';
import { createPersistentRetrieval } from '../../selection/persistent-retrieval.ts';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { QUIVER_BIN, percentileMs, processCpuSeconds, processRunQueueWaitSeconds, round3, withBenchHome, type BenchPlugin } from './bench-home.ts';
import { startIdleProbe, type IdleProbeResult } from './idle-probe.ts';

/** The two real npm servers the issue measured with (22 tools between them). */
export const NPM_BENCH_PLUGINS: readonly BenchPlugin[] = [
  { source: 'npm:@modelcontextprotocol/server-everything', name: 'everything' },
  { source: 'npm:@modelcontextprotocol/server-memory', name: 'memory' },
];

/** Queries a model might send to those servers, cycled through. */
export const BENCH_QUERIES: readonly string[] = [
  'echo back a message',
  'add two numbers together',
  'create entities in the knowledge graph',
  'search the graph for nodes about a person',
  'run a long operation and report progress',
  'return a small test image',
  'delete a relation between two entities',
  'read the whole knowledge graph',
  'sample text from the language model',
  'show environment variables of the server',
  'add observations to an existing entity',
  'get a resource reference',
];

/** What the stdio search bench measured (milliseconds). */
export interface GatewaySearchBench {
  tools: number;
  iterations: number;
  limit: number;
  searchP50Ms: number;
  searchP99Ms: number;
  searchMeanMs: number;
  /** The selection engine alone on the same catalog and queries (in-process, warm). */
  engine: { p50Ms: number; p99Ms: number; meanMs: number; selectionsPerSecond: number };
  /** The server during the timed searches: CPU used (all threads) and time runnable but waiting for a core (Linux). */
  server: { cpuMs: number | null; runQueueWaitMs: number | null };
  /** An idle Node process's event-loop delay over the same window: the machine's noise floor. */
  idleEventLoopDelay: IdleProbeResult;
  setup: string;
}

/** Options of `benchGatewaySearch`. */
export interface GatewaySearchBenchOptions {
  iterations?: number;
  warmup?: number;
  limit?: number;
  plugins?: readonly BenchPlugin[];
  queries?: readonly string[];
  /** Extra environment for the `quiver serve --stdio` child (e.g. NODE_OPTIONS=--cpu-prof). */
  serverEnv?: Record<string, string>;
}

/** Installs the plugins into a throwaway home and times `search_tools` through `quiver serve --stdio`. */
export async function benchGatewaySearch(options: GatewaySearchBenchOptions = {}): Promise<GatewaySearchBench> {
  const iterations = options.iterations ?? 300;
  const warmup = options.warmup ?? 30;
  const limit = options.limit ?? 5;
  const queries = options.queries ?? BENCH_QUERIES;
  return withBenchHome(options.plugins ?? NPM_BENCH_PLUGINS, async (home) => {
    const client = new Client({ name: 'bench-search', version: '1.0.0' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env: { ...home.env, ...options.serverEnv }, stderr: 'ignore' });
    await client.connect(transport);
    const times: number[] = [];
    let server: GatewaySearchBench['server'] = { cpuMs: null, runQueueWaitMs: null };
    let idleEventLoopDelay: IdleProbeResult | undefined;
    try {
      const search = async (i: number) => {
        const result = await client.callTool({ name: 'search_tools', arguments: { query: queries[i % queries.length]!, limit } });
        if (result.isError) throw new Error(`search_tools failed: ${JSON.stringify(result.content)}`);
      };
      for (let i = 0; i < warmup; i++) await search(i);
      const probe = await startIdleProbe();
      const before = serverClock(transport.pid);
      try {
        for (let i = 0; i < iterations; i++) {
          const started = performance.now();
          await search(i);
          times.push(performance.now() - started);
        }
      } finally {
        server = serverClockSince(transport.pid, before);
        idleEventLoopDelay = await probe.stop();
      }
    } finally {
      await client.close();
    }
    times.sort((a, b) => a - b);
    const engine = await engineAlone(home.dataDir, queries, iterations, warmup, limit);
    return {
      tools: engine.tools,
      iterations,
      limit,
      searchP50Ms: percentileMs(times, 50),
      searchP99Ms: percentileMs(times, 99),
      searchMeanMs: round3(times.reduce((sum, t) => sum + t, 0) / times.length),
      engine: engine.stats,
      server,
      idleEventLoopDelay: idleEventLoopDelay!,
      setup: 'SDK client -> stdio -> quiver serve --stdio (search mode, production backend, embedded PGlite; each selection event journaled before its id is returned, issue #23) -> search_tools; engine: selectTools in-process on the same data folder, unlogged',
    };
  });
}

/** The server's CPU and run-queue wait so far (seconds), undefined off Linux or without a pid. */
function serverClock(pid: number | null | undefined) {
  if (pid === null || pid === undefined) return { cpu: undefined, wait: undefined };
  return { cpu: processCpuSeconds(pid), wait: processRunQueueWaitSeconds(pid) };
}

/** What the server used since `before`, in milliseconds (null when unknown). */
function serverClockSince(pid: number | null | undefined, before: ReturnType<typeof serverClock>): GatewaySearchBench['server'] {
  const now = serverClock(pid);
  const since = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? null : Math.round((a - b) * 1000));
  return { cpuMs: since(now.cpu, before.cpu), runQueueWaitMs: since(now.wait, before.wait) };
}

/** The engine's own per-selection time on the served data folder (the server has exited). */
async function engineAlone(dataDir: string, queries: readonly string[], iterations: number, warmup: number, limit: number) {
  const { db } = await openStore({ kind: 'folder', path: dataDir });
  const engine = createSelectionEngine({ db, listen: false, retrieval: () => createPersistentRetrieval({ db, embedder: createOfflineEmbedder() }) });
  try {
    const select = (i: number) =>
      engine.selectTools({ query: queries[i % queries.length]!, k: limit, provider: 'mcp', log: false, context: { workspace: 'default', sessionId: 'bench' } });
    let tools = 0;
    for (let i = 0; i < warmup; i++) tools = (await select(i)).metadata.candidateCount;
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < iterations; i++) {
      const at = performance.now();
      await select(i);
      times.push(performance.now() - at);
    }
    const elapsed = performance.now() - started;
    times.sort((a, b) => a - b);
    return {
      tools,
      stats: {
        p50Ms: percentileMs(times, 50),
        p99Ms: percentileMs(times, 99),
        meanMs: round3(times.reduce((sum, t) => sum + t, 0) / times.length),
        selectionsPerSecond: Math.round((iterations / elapsed) * 1000),
      },
    };
  } finally {
    await engine.close();
    await db.close();
  }
}
