/**
 * @module cli/bench/replicas-modern
 * Issue #24: 2026-07-28 requests across replicas. N pinned `@modelcontextprotocol/client`
 * clients loop `search_tools` + `call_tool` through HAProxy (round robin, no stickiness)
 * against 1 and then 3 `quiver serve` replicas on one PostgreSQL database. Such requests keep
 * no session row, so the only shared state on their path is what every request reads anyway.
 * On a small machine the replicas, HAProxy, PostgreSQL and the clients share the cores: the
 * 3/1 ratio is the figure to read, not the absolute one. Needs QUIVER_BENCH_DATABASE_URL (or
 * QUIVER_TEST_DATABASE_URL) and haproxy; without them the section says so instead of measuring.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { percentileMs, round3, runQuiver } from './bench-home.ts';
import { haproxyAvailable, startReplicaCluster } from './replica-cluster.ts';
import { withDatabase, writeEchoPlugin } from './replicas.ts';

/** Options of `benchModernReplicas`. */
export interface ModernReplicasOptions {
  databaseUrl?: string;
  /** Concurrent clients (default 8). */
  clients?: number;
  /** How long each configuration runs, ms (default 10 s). */
  durationMs?: number;
}

/** One configuration's figures. */
export interface ModernReplicasRun {
  replicas: number;
  /** search + call pairs per second over all clients. */
  roundsPerSecond: number;
  searchP50Ms: number;
  searchP99Ms: number;
  callP50Ms: number;
  callP99Ms: number;
  errors: number;
  errorSamples: string[];
  /** Rows in mcp_sessions after the run (2026 requests keep none). */
  sessionRows: number;
}

export type ModernReplicasBench =
  | { unavailable: string }
  | { clients: number; durationMs: number; cores: number; runs: ModernReplicasRun[]; throughputRatio3to1: number; setup: string };

const QUERIES = ['echo the given text back', 'reverse the letters of a text', 'count the words in a text', 'repeat a message'];

async function load(url: string, key: string, count: number, durationMs: number): Promise<Omit<ModernReplicasRun, 'replicas' | 'sessionRows'>> {
  const searchTimes: number[] = [];
  const callTimes: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let rounds = 0;
  const clients: ModernClient[] = [];
  for (let index = 0; index < count; index += 1) {
    const client = new ModernClient({ name: `bench-modern-${index}`, version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernHttpTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
  }
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    clients.map(async (client, index) => {
      for (let round = 0; performance.now() < deadline; round += 1) {
        try {
          const t0 = performance.now();
          await client.callTool({ name: 'search_tools', arguments: { query: QUERIES[(index + round) % QUERIES.length]!, limit: 3 } });
          const t1 = performance.now();
          await client.callTool({ name: 'call_tool', arguments: { name: 'bench-echo__echo', arguments: { text: `round ${round} of ${index}` } } });
          searchTimes.push(t1 - t0);
          callTimes.push(performance.now() - t1);
          rounds += 1;
        } catch (error) {
          errors += 1;
          if (errorSamples.length < 5) errorSamples.push((error as Error).message.slice(0, 200));
        }
      }
    }),
  );
  const elapsed = performance.now() - started;
  await Promise.allSettled(clients.map((client) => client.close()));
  searchTimes.sort((a, b) => a - b);
  callTimes.sort((a, b) => a - b);
  return {
    roundsPerSecond: round3((rounds / elapsed) * 1000),
    searchP50Ms: percentileMs(searchTimes, 50),
    searchP99Ms: percentileMs(searchTimes, 99),
    callP50Ms: percentileMs(callTimes, 50),
    callP99Ms: percentileMs(callTimes, 99),
    errors,
    errorSamples,
  };
}

async function runConfiguration(adminUrl: string, replicas: number, clients: number, durationMs: number): Promise<ModernReplicasRun> {
  return withDatabase(adminUrl, async (databaseUrl) => {
    const home = mkdtempSync(join(tmpdir(), 'quiver-bench-modern-replicas-'));
    chmodSync(home, 0o755); // the sandbox user must reach the plugin folder
    try {
      const plugin = join(home, 'bench-echo');
      writeEchoPlugin(plugin);
      const env = {
        ...(process.env as Record<string, string>),
        QUIVER_HOME: join(home, 'home'),
        QUIVER_DATA_DIR: join(home, 'home', 'data'),
        QUIVER_DATABASE_URL: databaseUrl,
        QUIVER_LOG_LEVEL: 'silent',
        QUIVER_VERIFY_ON_INSTALL: 'off',
      };
      await runQuiver(['plugin', 'add', plugin, '--name', 'bench-echo', '--json'], env);
      const key = (JSON.parse(await runQuiver(['keys', 'create', 'bench', '--scope', 'mcp', '--json'], env)) as { key: string }).key;
      const cluster = await startReplicaCluster(replicas, env);
      try {
        // A short warm-up (plugin processes started on each replica), then the measured run.
        await load(cluster.url, key, Math.min(clients, 3 * replicas), Math.min(2_000, durationMs / 4));
        const figures = await load(cluster.url, key, clients, durationMs);
        const pg = await import('pg');
        const sql = new pg.default.Client({ connectionString: databaseUrl });
        await sql.connect();
        const sessionRows = Number((await sql.query<{ n: string }>('SELECT count(*) AS n FROM mcp_sessions')).rows[0]!.n);
        await sql.end();
        return { replicas, ...figures, sessionRows };
      } finally {
        await cluster.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
}

/** Runs 1 and then 3 replicas; see the module comment. */
export async function benchModernReplicas(options: ModernReplicasOptions = {}): Promise<ModernReplicasBench> {
  const adminUrl = options.databaseUrl ?? process.env.QUIVER_BENCH_DATABASE_URL ?? process.env.QUIVER_TEST_DATABASE_URL;
  if (!adminUrl) return { unavailable: 'set QUIVER_BENCH_DATABASE_URL to a PostgreSQL server (replicas share one database)' };
  if (!haproxyAvailable()) return { unavailable: 'haproxy is not installed (scripts/provision/system.sh)' };
  const clients = options.clients ?? 8;
  const durationMs = options.durationMs ?? 10_000;
  const one = await runConfiguration(adminUrl, 1, clients, durationMs);
  const three = await runConfiguration(adminUrl, 3, clients, durationMs);
  return {
    clients,
    durationMs,
    cores: availableParallelism(),
    runs: [one, three],
    throughputRatio3to1: round3(three.roundsPerSecond / one.roundsPerSecond),
    setup: `${clients} pinned 2026-07-28 clients (search_tools + call_tool) through HAProxy round robin; quiver serve replicas on one PostgreSQL; one plugin (3 tools); everything on this machine's ${availableParallelism()} cores`,
  };
}
