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
import { availableParallelism } from 'node:os';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { round3 } from './bench-home.ts';
import { haproxyAvailable } from './replica-cluster.ts';
import { measureRounds, withEchoCluster, type LoadFigures } from './replicas.ts';

/** Options of `benchModernReplicas`. */
export interface ModernReplicasOptions {
  databaseUrl?: string;
  /** Concurrent clients (default 8). */
  clients?: number;
  /** How long each configuration runs, ms (default 10 s). */
  durationMs?: number;
}

/** One configuration's figures. */
export interface ModernReplicasRun extends LoadFigures {
  replicas: number;
  /** Rows in mcp_sessions after the run (2026 requests keep none). */
  sessionRows: number;
}

export type ModernReplicasBench =
  | { unavailable: string }
  | { clients: number; durationMs: number; cores: number; runs: ModernReplicasRun[]; throughputRatio3to1: number; setup: string };

async function load(url: string, key: string, count: number, durationMs: number): Promise<LoadFigures> {
  const clients: ModernClient[] = [];
  for (let index = 0; index < count; index += 1) {
    const client = new ModernClient({ name: `bench-modern-${index}`, version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernHttpTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
  }
  // The 2026 list stays still: the found tool is reached through call_tool.
  return measureRounds(clients, durationMs, (text) => ({ name: 'call_tool', arguments: { name: 'bench-echo__echo', arguments: { text } } }));
}

async function runConfiguration(adminUrl: string, replicas: number, clients: number, durationMs: number): Promise<ModernReplicasRun> {
  return withEchoCluster(adminUrl, replicas, {}, async ({ url, key, databaseUrl }) => {
    // A short warm-up (plugin processes started on each replica), then the measured run.
    await load(url, key, Math.min(clients, 3 * replicas), Math.min(2_000, durationMs / 4));
    const figures = await load(url, key, clients, durationMs);
    const pg = await import('pg');
    const sql = new pg.default.Client({ connectionString: databaseUrl });
    await sql.connect();
    const sessionRows = Number((await sql.query<{ n: string }>('SELECT count(*) AS n FROM mcp_sessions')).rows[0]!.n);
    await sql.end();
    return { replicas, ...figures, sessionRows };
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
