/**
 * @module cli/bench/replicas
 * Scale-out on PostgreSQL (issue #16), measured: N MCP SDK sessions loop search + call through
 * HAProxy (round robin, no stickiness) against 1 and then 3 `quiver serve` replicas on one
 * PostgreSQL database, and against 1 replica whose sessions stay in its memory
 * (QUIVER_MCP_SESSIONS=memory) for the added latency of shared session state. Each
 * configuration gets a fresh database, a fresh home and the same small plugin (a dependency-free
 * MCP server written into the home). On a small machine the replicas, HAProxy, PostgreSQL and
 * the clients share the cores: the 3/1 ratio is the figure to read, not the absolute one.
 * Needs QUIVER_BENCH_DATABASE_URL (or QUIVER_TEST_DATABASE_URL) and haproxy; without them the
 * section says so instead of measuring.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { percentileMs, round3, runQuiver } from './bench-home.ts';
import { haproxyAvailable, startReplicaCluster } from './replica-cluster.ts';

/** Options of `benchReplicas`. */
export interface ReplicasBenchOptions {
  /** PostgreSQL server URL with the right to create databases. */
  databaseUrl?: string;
  /** Concurrent sessions (default 24). */
  sessions?: number;
  /** How long each configuration runs, ms (default 20 s). */
  durationMs?: number;
}

/** Figures of one load. */
export interface LoadFigures {
  /** search + call pairs per second. */
  roundsPerSecond: number;
  searchP50Ms: number;
  searchP99Ms: number;
  callP50Ms: number;
  callP99Ms: number;
  errors: number;
  errorSamples: string[];
}

/** One configuration's figures: one session alone (latency), then all sessions at once (throughput). */
export interface ReplicasRun {
  replicas: number;
  sessionStore: 'database' | 'memory';
  single: LoadFigures;
  concurrent: LoadFigures;
}

/** What the section reports. */
export type ReplicasBench =
  | { unavailable: string }
  | {
      sessions: number;
      durationMs: number;
      cores: number;
      runs: ReplicasRun[];
      /** Throughput of 3 replicas over 1 (both with stored sessions). */
      throughputRatio3to1: number;
      /** Stored sessions (PostgreSQL) minus in-memory, 1 replica, one session alone, at p50 and p99, ms. */
      sharedStateAddedMs: { searchP50: number; searchP99: number; callP50: number; callP99: number };
      setup: string;
    };

const ECHO_SERVER = `import { createInterface } from 'node:readline';
const tools = [
  { name: 'echo', description: 'Echo the given text back unchanged.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  { name: 'reverse', description: 'Reverse the letters of a text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  { name: 'count_words', description: 'Count the words in a text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
];
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const reply = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'initialize') return reply({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bench-echo', version: '1.0.0' } });
  if (m.method === 'ping') return reply({});
  if (m.method === 'tools/list') return reply({ tools });
  if (m.method === 'tools/call') return reply({ content: [{ type: 'text', text: String(m.params.arguments?.text ?? '') }] });
  send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'method not found' } });
});
`;

const QUERIES = ['echo the given text back', 'reverse the letters of a text', 'count the words in a text', 'repeat a message'];

/** Writes the bench's dependency-free MCP server plugin (tools echo, reverse, count_words) into `folder`. */
export function writeEchoPlugin(folder: string): void {
  mkdirSync(folder, { mode: 0o755, recursive: true });
  chmodSync(folder, 0o755);
  writeFileSync(join(folder, 'server.mjs'), ECHO_SERVER);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'bench-echo', version: '1.0.0', description: 'Echo server', main: 'server.mjs' }));
}

export async function withDatabase<T>(adminUrl: string, body: (url: string) => Promise<T>): Promise<T> {
  const name = `quiver_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await body(url.toString());
  } finally {
    const dropper = new pg.Client({ connectionString: adminUrl });
    await dropper.connect();
    await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await dropper.end();
  }
}

/** Runs `sessions` clients of search + call through `url` for `durationMs`. */
async function load(url: string, key: string, sessions: number, durationMs: number): Promise<LoadFigures> {
  const clients: Client[] = [];
  for (let index = 0; index < sessions; index += 1) {
    const client = new Client({ name: `bench-replicas-${index}`, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    await client.callTool({ name: 'search_tools', arguments: { query: QUERIES[0]!, limit: 3 } });
    clients.push(client);
  }
  // A 2025 session binds what it found, so the echo tool is called by its own name.
  return measureRounds(clients, durationMs, (text) => ({ name: 'bench-echo__echo', arguments: { text } }));
}

/** A connected client of either SDK line, as the load loop drives it. */
export interface LoadClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Every client loops `search_tools` then the echo call (`echoCall` says how its era reaches the
 * tool) until `durationMs` has passed; the clients are closed after. The figures of that run.
 */
export async function measureRounds(clients: LoadClient[], durationMs: number, echoCall: (text: string) => { name: string; arguments: Record<string, unknown> }): Promise<LoadFigures> {
  const searchTimes: number[] = [];
  const callTimes: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let rounds = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    clients.map(async (client, index) => {
      for (let round = 0; performance.now() < deadline; round += 1) {
        try {
          const t0 = performance.now();
          await client.callTool({ name: 'search_tools', arguments: { query: QUERIES[(index + round) % QUERIES.length]!, limit: 3 } });
          const t1 = performance.now();
          await client.callTool(echoCall(`round ${round} of ${index}`));
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

/**
 * A bench home with the echo plugin installed and an `mcp` key, on a fresh database, and
 * `replicas` quiver serve processes behind HAProxy on it: `body` gets the cluster's URL, the key
 * and the database URL; everything is removed after.
 */
export async function withEchoCluster<T>(adminUrl: string, replicas: number, extraEnv: Record<string, string>, body: (cluster: { url: string; key: string; databaseUrl: string }) => Promise<T>): Promise<T> {
  return withDatabase(adminUrl, async (databaseUrl) => {
    const home = mkdtempSync(join(tmpdir(), 'quiver-bench-replicas-'));
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
        ...extraEnv,
      };
      await runQuiver(['plugin', 'add', plugin, '--name', 'bench-echo', '--json'], env);
      const key = (JSON.parse(await runQuiver(['keys', 'create', 'bench', '--scope', 'mcp', '--json'], env)) as { key: string }).key;
      const cluster = await startReplicaCluster(replicas, env);
      try {
        return await body({ url: cluster.url, key, databaseUrl });
      } finally {
        await cluster.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
}

async function runConfiguration(adminUrl: string, replicas: number, sessionStore: 'database' | 'memory', sessions: number, durationMs: number): Promise<ReplicasRun> {
  return withEchoCluster(adminUrl, replicas, { QUIVER_MCP_SESSIONS: sessionStore }, async ({ url, key }) => {
    const single = await load(url, key, 1, Math.max(2_000, durationMs / 4));
    const concurrent = await load(url, key, sessions, durationMs);
    return { replicas, sessionStore, single, concurrent };
  });
}

/** Runs the three configurations; see the module comment. */
export async function benchReplicas(options: ReplicasBenchOptions = {}): Promise<ReplicasBench> {
  const adminUrl = options.databaseUrl ?? process.env.QUIVER_BENCH_DATABASE_URL ?? process.env.QUIVER_TEST_DATABASE_URL;
  if (!adminUrl) return { unavailable: 'set QUIVER_BENCH_DATABASE_URL to a PostgreSQL server (replicas share one database)' };
  if (!haproxyAvailable()) return { unavailable: 'haproxy is not installed (scripts/provision/system.sh)' };
  const sessions = options.sessions ?? 24;
  const durationMs = options.durationMs ?? 20_000;
  const memory = await runConfiguration(adminUrl, 1, 'memory', sessions, durationMs);
  const one = await runConfiguration(adminUrl, 1, 'database', sessions, durationMs);
  const three = await runConfiguration(adminUrl, 3, 'database', sessions, durationMs);
  return {
    sessions,
    durationMs,
    cores: availableParallelism(),
    runs: [memory, one, three],
    throughputRatio3to1: round3(three.concurrent.roundsPerSecond / one.concurrent.roundsPerSecond),
    sharedStateAddedMs: {
      searchP50: round3(one.single.searchP50Ms - memory.single.searchP50Ms),
      searchP99: round3(one.single.searchP99Ms - memory.single.searchP99Ms),
      callP50: round3(one.single.callP50Ms - memory.single.callP50Ms),
      callP99: round3(one.single.callP99Ms - memory.single.callP99Ms),
    },
    setup: `${sessions} MCP SDK sessions through HAProxy round robin; quiver serve replicas on one PostgreSQL; one plugin (3 tools); everything on this machine's ${availableParallelism()} cores`,
  };
}
