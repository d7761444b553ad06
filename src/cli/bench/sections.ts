/**
 * @module cli/bench/sections
 * The benchmark sections `quiver bench` runs, in order (DESIGN §6 targets). Each returns
 * what it measured; the targets are printed beside the figures, never instead of them.
 */
import { openStore } from '../../store/open.ts';
import { benchDifferentialSync } from './differential-sync.ts';
import { benchSelectionLatency, benchTokenSavings, benchBandit } from './selection.ts';
import { benchModelEmbedder } from './model-embedder.ts';
import { benchEmbedding } from './embedding.ts';
import { benchProcessBound, benchCallOverhead } from './runtime.ts';
import { benchGatewayOverhead, benchSessionTokens } from './gateway-overhead.ts';
import { benchServeStartup } from './startup.ts';
import { benchMemory } from './memory.ts';
import { benchProductionGatewayOverhead } from './gateway-production.ts';
import { benchGatewaySearch } from './gateway-search.ts';
import { benchStdioGateway } from './gateway-stdio.ts';
import { benchEventJournal } from './event-journal.ts';
import { benchGatewayLoad } from './gateway-load.ts';
import { benchPoisoning } from './poisoning.ts';
import { benchVerification } from './verification.ts';
import { benchLearning } from './learning.ts';
import { benchReplicas } from './replicas.ts';
import { benchNotifyFanout } from './notify-fanout.ts';
import { benchTelemetryOverhead } from './telemetry-overhead.ts';
import { benchPidGeneration } from './pid-generation.ts';
import { benchSharedLimits } from './shared-limits.ts';
import { benchRollouts } from './rollouts.ts';
import { benchSessionEvents } from './session-events.ts';
import { benchResandbox } from './resandbox.ts';
import { benchTwoEras } from './two-eras.ts';
import { benchModernReplicas } from './replicas-modern.ts';

/**
 * The load bench's size (full length by default, shorter for iterations) and, with
 * QUIVER_BENCH_GATEWAY_LOAD_CPU_PROF set to a folder, a CPU profile of the server written there;
 * QUIVER_BENCH_GATEWAY_LOAD_STAGGER_MS (0 or more) spreads the sessions' first requests.
 */
function gatewayLoadSize(): { sessions: number; durationMs: number; serverNodeArgs: string[]; staggerMs?: number } {
  const profileDir = process.env.QUIVER_BENCH_GATEWAY_LOAD_CPU_PROF;
  const staggerMs = envWhole('QUIVER_BENCH_GATEWAY_LOAD_STAGGER_MS');
  return {
    ...(staggerMs === undefined ? {} : { staggerMs }),
    sessions: envCount('QUIVER_BENCH_GATEWAY_LOAD_SESSIONS', 150),
    durationMs: envCount('QUIVER_BENCH_GATEWAY_LOAD_MS', 60_000),
    serverNodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  };
}

/** With QUIVER_BENCH_STDIO_CPU_PROF set to a folder, the stdio servers write CPU profiles there (NODE_OPTIONS takes `--cpu-prof` from Node 22 on). */
function stdioServerProfile(): { serverEnv?: Record<string, string> } {
  const profileDir = process.env.QUIVER_BENCH_STDIO_CPU_PROF;
  return profileDir ? { serverEnv: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } } : {};
}

/** A whole number (0 or more) from the environment, else undefined. */
function envWhole(name: string): number | undefined {
  const raw = process.env[name];
  const value = Number(raw);
  return raw !== undefined && raw.trim() !== '' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** A positive integer from the environment (short configurable runs), else `fallback`. */
function envCount(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** One named benchmark. */
export interface BenchSection {
  name: string;
  target: string;
  run(): Promise<unknown>;
}

export const benchSections: BenchSection[] = [
  {
    name: 'selectionLatency',
    target: '1,000 tools: p50 ≤ 1 ms, p99 ≤ 5 ms, ≥ 2,000/s on one core; 100,000 tools: p99 ≤ 25 ms',
    run: () => benchSelectionLatency({ sizes: [1_000, 10_000, 100_000], retrieval: 'hybrid' }),
  },
  {
    name: 'selectionLatencyLexicalOnly',
    target: 'for comparison: the same pipeline without vectors',
    run: () => benchSelectionLatency({ sizes: [1_000, 10_000], retrieval: 'lexical' }),
  },
  {
    name: 'embedding',
    target: 'issue #25: query embedding p50 ≤ 5 ms with a model on; hashed offline vs the token table distilled from the model (the default) vs the model itself, same 100 requests, uncached',
    run: () => benchEmbedding(),
  },
  {
    name: 'tableEmbedder',
    target: 'issue #25, the default token table at 1,000 tools: query embedding p50 ≤ 5 ms, selection p99 ≤ 25 ms (also while 1,000 tools are embedded in the background), RSS',
    run: () => benchModelEmbedder({ kind: 'table' }),
  },
  {
    name: 'modelEmbedder',
    target: 'issue #25, the shipped model at 1,000 tools: query embedding p50 ≤ 5 ms, selection p99 ≤ 25 ms (also while 1,000 tools are embedded in the background), RSS',
    run: () => benchModelEmbedder(),
  },
  { name: 'tokenSavings', target: '≥ 95 % of schema tokens saved at K = 7 on ≥ 150 real tools', run: () => benchTokenSavings() },
  { name: 'bandit', target: 'within 5 % of the oracle after ~50 interactions per context (seed 001 §7.4)', run: async () => benchBandit() },
  {
    name: 'learning',
    target: 'learned example queries (issue #13): search p99 while learning ≈ without; time from an outcome to the taught tool at rank 1',
    run: () => benchLearning(),
  },
  { name: 'pidGeneration', target: 'issue #14: generation time per tool without an LLM (zod + TypeScript sources, 200 tools)', run: () => benchPidGeneration() },
  {
    name: 'differentialSync',
    target: '1,000 tools with 3 changed: ≤ 100 ms on PGlite, exactly 3 re-embedded',
    async run() {
      const { db } = await openStore({ kind: 'memory' });
      try {
        return await benchDifferentialSync(db);
      } finally {
        await db.close();
      }
    },
  },
  {
    name: 'processBound',
    target: '1,000 calls across 50 sessions to 5 plugins: ≤ 5 (+ pool size) plugin processes alive, none orphaned',
    run: () => benchProcessBound(),
  },
  {
    name: 'sharedLimits',
    target: 'issues #11/#16: cost per call of a declared limit: in-memory token (µs) vs the replica-wide bucket and slot lease on PGlite and PostgreSQL (ms); plugins without limits pay nothing',
    run: () => benchSharedLimits(),
  },
  { name: 'supervisorCallOverhead', target: 'added latency of a call through the supervisor vs a direct MCP client', run: () => benchCallOverhead() },
  { name: 'gatewayCallOverhead', target: '≤ 1 ms added at p50 vs a direct MCP client', run: () => benchProductionGatewayOverhead() },
  {
    name: 'gatewayCallOverheadTestBackend',
    target: 'the gateway alone (in-repo test backend, no sandbox), for comparison',
    run: () => benchGatewayOverhead(),
  },
  {
    name: 'gatewaySearch',
    target: 'search_tools through quiver serve --stdio (two real npm servers): p50 ≤ 2 ms, p99 ≤ 10 ms; the engine alone beside it',
    run: () => benchGatewaySearch(),
  },
  {
    name: 'stdioGateway',
    target:
      'issue #28, quiver serve --stdio vs the plugin called directly, interleaved in one run: tools/call added ≤ 0.25 ms at p50 (ratio ≤ 2), search_tools p99 ≤ 5 ms (QUIVER_BENCH_STDIO_ROUNDS, default 600; QUIVER_BENCH_STDIO_CPU_PROF=folder: CPU profiles of the servers, Node 22 and later)',
    run: () => benchStdioGateway({ rounds: envCount('QUIVER_BENCH_STDIO_ROUNDS', 600), ...stdioServerProfile() }),
  },
  {
    name: 'eventJournal',
    target: 'issue #23: an acknowledged selection is durable; its cost on the hot path (journal append) against one PGlite INSERT per selection',
    run: () => benchEventJournal(),
  },
  {
    name: 'gatewayLoad',
    target: 'issue #28: 150 MCP sessions, search + call over HTTP for 60 s on the embedded default: 0 errors, search p99 ≤ 250 ms, ≥ 2× the searches per server CPU-second measured at filing (QUIVER_BENCH_GATEWAY_LOAD_SESSIONS, default 150; QUIVER_BENCH_GATEWAY_LOAD_MS, default 60000; QUIVER_BENCH_GATEWAY_LOAD_CPU_PROF, a folder for a CPU profile of the server; QUIVER_BENCH_GATEWAY_LOAD_STAGGER_MS, default 0: the first requests of the sessions spread over that many ms)',
    run: () => benchGatewayLoad(gatewayLoadSize()),
  },
  {
    name: 'gatewayLoadPostgres',
    target: 'issue #28: the same 150 sessions for 60 s with the server on PostgreSQL (sessions written through; needs QUIVER_BENCH_DATABASE_URL; same size variables)',
    run: () => {
      const databaseUrl = process.env.QUIVER_BENCH_DATABASE_URL ?? process.env.QUIVER_TEST_DATABASE_URL;
      return databaseUrl ? benchGatewayLoad({ ...gatewayLoadSize(), databaseUrl }) : Promise.resolve({ unavailable: 'set QUIVER_BENCH_DATABASE_URL to a PostgreSQL server where the bench may create a database' });
    },
  },
  { name: 'sessionTokens', target: 'tool tokens per session in search mode vs all mode (≥ 150 real tools)', run: () => benchSessionTokens() },
  {
    name: 'rollouts',
    target: 'issue #11: failed client calls during a healthy blue-green upgrade = 0; during a bad one ≤ the canary share; time from degradation to rollback',
    run: () => benchRollouts(),
  },
  {
    name: 'replicas',
    target: 'issue #16: search + call through HAProxy, 1 vs 3 replicas on one PostgreSQL (ratio; 2 cores bound the absolute figure), and the latency shared session state adds over in-memory sessions',
    run: () => benchReplicas(),
  },
  {
    name: 'twoEras',
    target:
      'issue #24: per era default (2025 search, 2026 still), over HTTP and stdio: tools/list bytes before and after N searches (2026: unchanged, so the prompt cache survives), list tokens per turn, search_tools p50/p99 (QUIVER_BENCH_TWO_ERAS_SEARCHES, default 3; QUIVER_BENCH_TWO_ERAS_TIMED, default 40)',
    run: () => benchTwoEras({ searches: envCount('QUIVER_BENCH_TWO_ERAS_SEARCHES', 3), timedSearches: envCount('QUIVER_BENCH_TWO_ERAS_TIMED', 40) }),
  },
  {
    name: 'modernReplicas',
    target:
      'issue #24: 2026-07-28 search + call_tool through HAProxy, 1 vs 3 replicas on one PostgreSQL (ratio; no session rows; QUIVER_BENCH_MODERN_REPLICAS_CLIENTS, default 8; QUIVER_BENCH_MODERN_REPLICAS_MS, default 10000)',
    run: () => benchModernReplicas({ clients: envCount('QUIVER_BENCH_MODERN_REPLICAS_CLIENTS', 8), durationMs: envCount('QUIVER_BENCH_MODERN_REPLICAS_MS', 10_000) }),
  },
  {
    name: 'sessionEvents',
    target: 'issue #16: the write per SSE event of a stored session (resumable streams, Last-Event-ID) and a replay of 100 events, embedded and PostgreSQL',
    run: () => benchSessionEvents(),
  },
  {
    name: 'notifyFanout',
    target: 'issue #16: LISTEN/NOTIFY delivery to N listening replicas, PostgreSQL connections per replica, bytes per MCP session row (docs/scale-out.md)',
    run: () => benchNotifyFanout(),
  },
  {
    name: 'telemetryOverhead',
    target: 'issue #16: what the always-on metrics add per selection and per MCP request (ns), tracing off',
    run: () => benchTelemetryOverhead(),
  },
  {
    name: 'serveStartup',
    target: 'issue #28: quiver serve ready ≤ 1 s on a warm data folder (embedded default); quiver --help ≤ 0.3 s; a forwarded CLI command ≤ 0.3 s and ≤ 80 MB RSS',
    run: () => benchServeStartup(),
  },
  {
    name: 'memory',
    target: 'issue #28: idle quiver serve RSS ≤ 150 MB with no plugin, ≤ 300 MB with 10,000 tools; the engine alone ≤ 400 MB (DESIGN §6)',
    run: () => benchMemory(10_000),
  },
  { name: 'poisoning', target: 'tool poisoning: every corpus case detected; false alarms on real servers and bench catalogs (issue #10)', run: () => benchPoisoning() },
  {
    name: 'resandbox',
    target: 'issue #23: first denied connection of a dormant plugin → its processes stopped and its next one under the stricter profile, within seconds (≤ 10 s)',
    run: () => benchResandbox(3),
  },
  {
    name: 'verification',
    target: 'plugin verify of a typical npm MCP server (server-memory): every stage and the total ≤ 30 s (seed: 87.8 s) (issue #10)',
    run: () => benchVerification(3),
  },
];
