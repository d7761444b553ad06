/**
 * @module cli/bench/gateway-stdio
 * Issue #28's stdio targets in one run: `tools/call` through `quiver serve --stdio` adds
 * ≤ 0.25 ms at p50 over calling the plugin directly (ratio ≤ 2), and `search_tools` p99 ≤ 5 ms.
 * One throwaway home with two real npm servers (server-everything, server-memory), one SDK
 * client straight to server-everything's installed copy, one to `quiver serve --stdio`.
 * - Phase `search` (the default exposure): each round runs a direct `echo`, the same `echo`
 *   through Quiver (bound by a search at the start) and a `search_tools`, in an order that
 *   rotates every round, so machine noise hits all three alike. Each search also reports the
 *   previous one's outcome, so selection events, outcomes and call events are all written
 *   while the figures are taken (their flushes are what a slow 1 % was made of).
 * - Phase `all` (`--exposure all`, a fresh server on the same folder): direct vs Quiver `echo`
 *   alone, alternating which goes first.
 * Beside the figures: the server's CPU and run-queue wait, the server's own event-loop delay
 * over the timed rounds (a histogram started and read by signal: a stall of the server's, such
 * as a long database write, shows there), an idle process's event-loop delay over the same
 * window (the machine's noise floor: on 2 shared cores the server waits for a core as often as
 * it blocks itself) and the load average.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parseJsonText } from '../../core/validation.ts';
import { QUIVER_BIN, percentileMs, processCpuSeconds, processRunQueueWaitSeconds, round3, withBenchHome, type BenchHome } from './bench-home.ts';
import { BENCH_QUERIES, NPM_BENCH_PLUGINS } from './gateway-search.ts';
import { startIdleProbe, type IdleProbeResult } from './idle-probe.ts';

/** Latency figures of one path (milliseconds). */
export interface PathStats {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Quiver's `echo` against the direct one, same rounds. */
export interface CallComparison {
  direct: PathStats;
  quiver: PathStats;
  /** Quiver p50 − direct p50 (target ≤ 0.25 ms). */
  addedP50Ms: number;
  /** Quiver p50 / direct p50 (target ≤ 2). */
  ratioP50: number;
  addedP99Ms: number;
}

/** What one phase's server and machine did during the timed rounds. */
export interface PhaseConditions {
  serverCpuMs: number | null;
  serverRunQueueWaitMs: number | null;
  /** How late the server's 10 ms timer fired during the timed rounds (null when it could not be read). */
  serverEventLoopDelay: IdleProbeResult | null;
  idleEventLoopDelay: IdleProbeResult;
  /** 1-minute load average at the start and end of the phase. */
  loadAverage: [number, number];
}

/** What the bench measured. */
export interface StdioGatewayBench {
  rounds: number;
  server: string;
  search: { call: CallComparison; searchTools: PathStats; conditions: PhaseConditions };
  all: { call: CallComparison; conditions: PhaseConditions };
  setup: string;
}

export interface StdioGatewayBenchOptions {
  rounds?: number;
  warmup?: number;
  /**
   * Extra environment for the `quiver serve --stdio` children. Its NODE_OPTIONS is added to the
   * loop probe's, not put in its place (else the server's event-loop figures go missing). Node 20
   * refuses `--cpu-prof` in NODE_OPTIONS (the server exits at once); a profile can be taken there
   * by an `--import` hook that drives `node:inspector`'s Profiler.
   */
  serverEnv?: Record<string, string>;
}

function stats(times: number[]): PathStats {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    p50Ms: percentileMs(sorted, 50),
    p99Ms: percentileMs(sorted, 99),
    maxMs: round3(sorted.at(-1) ?? Number.NaN),
    meanMs: round3(sorted.reduce((sum, t) => sum + t, 0) / sorted.length),
  };
}

function compare(directTimes: number[], quiverTimes: number[]): CallComparison {
  const direct = stats(directTimes);
  const quiver = stats(quiverTimes);
  return {
    direct,
    quiver,
    addedP50Ms: round3(quiver.p50Ms - direct.p50Ms),
    ratioP50: Math.round((quiver.p50Ms / direct.p50Ms) * 100) / 100,
    addedP99Ms: round3(quiver.p99Ms - direct.p99Ms),
  };
}

/**
 * An event-loop lag sampler inside the server (how late a 10 ms interval timer fires), loaded
 * with `--import` (a data: URL, so nothing is added to the server's code), started and stopped
 * by SIGUSR2; the second signal writes its figures to `<file>.<pid>`.
 */
const LOOP_PROBE_SOURCE = `
import { renameSync, writeFileSync } from 'node:fs';
const file = process.env.QUIVER_BENCH_LOOP_FILE;
if (file) {
  // A 10 ms interval timer's lateness: light enough not to move the figures it sits beside.
  let lags = null;
  let timer;
  let expected = 0;
  const tick = () => { const now = performance.now(); lags.push(Math.max(0, now - expected)); expected = now + 10; };
  process.on('SIGUSR2', () => {
    if (lags === null) { lags = []; expected = performance.now() + 10; timer = setInterval(tick, 10); timer.unref(); return; }
    clearInterval(timer);
    const sorted = lags.sort((a, b) => a - b);
    lags = null;
    const at = (q) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    const ms = (v) => Math.round(v * 1e3) / 1e3;
    writeFileSync(file + '.tmp', JSON.stringify({ p50Ms: ms(at(0.5)), p99Ms: ms(at(0.99)), maxMs: ms(sorted.at(-1) ?? 0) }));
    renameSync(file + '.tmp', file + '.' + process.pid);
  });
}
`;

/** The server's loop probe: the environment that loads it, and start/stop by pid. */
function serverLoopProbe() {
  const file = join(tmpdir(), `quiver-bench-loop-${process.pid}-${Date.now()}`);
  return {
    env: { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import data:text/javascript,${encodeURIComponent(LOOP_PROBE_SOURCE)}`.trim(), QUIVER_BENCH_LOOP_FILE: file },
    start(pid: number | undefined): void {
      if (pid !== undefined) process.kill(pid, 'SIGUSR2');
    },
    async stop(pid: number | undefined): Promise<IdleProbeResult | null> {
      if (pid === undefined) return null;
      const out = `${file}.${pid}`;
      process.kill(pid, 'SIGUSR2');
      for (let waited = 0; waited < 5_000 && !existsSync(out); waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      if (!existsSync(out)) return null;
      try {
        return parseJsonText(readFileSync(out, 'utf8'), 'server loop probe') as IdleProbeResult;
      } finally {
        rmSync(out, { force: true });
      }
    },
  };
}

/** Runs `steps` round after round, rotating which goes first, timing each into its own list. */
async function interleave(steps: Array<(round: number) => Promise<void>>, rounds: number, warmup: number, loop: ReturnType<typeof serverLoopProbe>): Promise<{ times: number[][]; conditions: (pid: number | undefined) => Promise<PhaseConditions> }> {
  for (let round = 0; round < warmup; round++) for (const step of steps) await step(round);
  const times = steps.map(() => [] as number[]);
  return {
    times,
    async conditions(pid) {
      const load0 = loadavg()[0]!;
      const probe = await startIdleProbe();
      loop.start(pid);
      const cpu0 = pid === undefined ? undefined : processCpuSeconds(pid);
      const wait0 = pid === undefined ? undefined : processRunQueueWaitSeconds(pid);
      let idle: IdleProbeResult;
      try {
        for (let round = 0; round < rounds; round++) {
          for (let k = 0; k < steps.length; k++) {
            const index = (round + k) % steps.length;
            const started = performance.now();
            await steps[index]!(warmup + round);
            times[index]!.push(performance.now() - started);
          }
        }
      } finally {
        idle = await probe.stop();
      }
      const serverEventLoopDelay = await loop.stop(pid);
      const cpu1 = pid === undefined ? undefined : processCpuSeconds(pid);
      const wait1 = pid === undefined ? undefined : processRunQueueWaitSeconds(pid);
      const since = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? null : Math.round((b - a) * 1000));
      return { serverCpuMs: since(cpu0, cpu1), serverRunQueueWaitMs: since(wait0, wait1), serverEventLoopDelay, idleEventLoopDelay: idle, loadAverage: [round3(load0), round3(loadavg()[0]!)] };
    },
  };
}

async function connectQuiver(home: BenchHome, args: string[], serverEnv: Record<string, string> | undefined, loop: ReturnType<typeof serverLoopProbe>): Promise<{ client: Client; pid: number | undefined }> {
  const client = new Client({ name: 'bench-stdio', version: '1.0.0' });
  const nodeOptions = [loop.env.NODE_OPTIONS, serverEnv?.['NODE_OPTIONS']].filter((value) => value !== undefined && value !== '').join(' ');
  const env = { ...home.env, ...loop.env, ...serverEnv, NODE_OPTIONS: nodeOptions };
  const transport = new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio', ...args], env, stderr: 'ignore' });
  await client.connect(transport);
  return { client, pid: transport.pid ?? undefined };
}

/** Calls `name` with `{message}` and fails on a tool error (a number per round keeps the iteration guard quiet). */
function echo(client: Client, name: string) {
  return async (round: number) => {
    const result = await client.callTool({ name, arguments: { message: `bench ${round}` } });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  };
}

/** Installs the two servers into a throwaway home and runs both phases. */
export async function benchStdioGateway(options: StdioGatewayBenchOptions = {}): Promise<StdioGatewayBench> {
  const rounds = options.rounds ?? 600;
  const warmup = options.warmup ?? 50;
  const loop = serverLoopProbe();
  return withBenchHome(NPM_BENCH_PLUGINS, async (home) => {
    const shown = parseJsonText(await home.quiver(['plugin', 'show', 'everything', '--json']), 'plugin show') as {
      plugin: { version: string; launch: { args: string[]; cwd: string }; source: { cachePath: string } };
    };
    const { launch, source } = shown.plugin;
    const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: launch.args, cwd: join(source.cachePath, launch.cwd), stderr: 'ignore' }));
    try {
      // Phase 1: the default exposure; one search binds echo, then calls and searches interleave.
      const searchPhase = await (async () => {
        const { client, pid } = await connectQuiver(home, [], options.serverEnv, loop);
        try {
          const found = await client.callTool({ name: 'search_tools', arguments: { query: 'echo back a message', limit: 5 } });
          if (!JSON.stringify(found.content).includes('everything__echo')) throw new Error(`search_tools did not offer everything__echo: ${JSON.stringify(found.content).slice(0, 400)}`);
          const search = async (round: number) => {
            const result = await client.callTool({ name: 'search_tools', arguments: { query: BENCH_QUERIES[round % BENCH_QUERIES.length]!, limit: 5 } });
            if (result.isError) throw new Error(`search_tools failed: ${JSON.stringify(result.content)}`);
          };
          const run = await interleave([echo(direct, 'echo'), echo(client, 'everything__echo'), search], rounds, warmup, loop);
          const conditions = await run.conditions(pid);
          const [directTimes, quiverTimes, searchTimes] = run.times as [number[], number[], number[]];
          return { call: compare(directTimes, quiverTimes), searchTools: stats(searchTimes), conditions };
        } finally {
          await client.close();
        }
      })();
      // Phase 2: every tool listed, no search.
      const allPhase = await (async () => {
        const { client, pid } = await connectQuiver(home, ['--exposure', 'all'], options.serverEnv, loop);
        try {
          const run = await interleave([echo(direct, 'echo'), echo(client, 'everything__echo')], rounds, warmup, loop);
          const conditions = await run.conditions(pid);
          const [directTimes, quiverTimes] = run.times as [number[], number[]];
          return { call: compare(directTimes, quiverTimes), conditions };
        } finally {
          await client.close();
        }
      })();
      return {
        rounds,
        server: `@modelcontextprotocol/server-everything ${shown.plugin.version} (+ server-memory in the catalog)`,
        search: searchPhase,
        all: allPhase,
        setup:
          'SDK client -> stdio -> quiver serve --stdio (production backend, embedded PGlite, plugin sandboxed) -> server-everything echo; vs SDK client -> stdio -> server-everything echo; search phase: direct echo, Quiver echo and search_tools rotated in each round; all phase: --exposure all, direct and Quiver echo alternated',
      };
    } finally {
      await direct.close().catch(() => {});
    }
  });
}
