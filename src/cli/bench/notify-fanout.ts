/**
 * @module cli/bench/notify-fanout
 * What grows with the number of replicas on one PostgreSQL (issue #16, docs/scale-out.md
 * "10 and 100 replicas"), measured on a real server:
 * - LISTEN/NOTIFY fan-out: N connections LISTEN on one channel (one per replica: each Quiver
 *   replica holds one listening connection), one more sends `pg_notify`; the time from sending
 *   to the last listener receiving it, per N, and the sender's own statement time;
 * - connections per replica: a real app (`createApp`) on the database under 100 concurrent
 *   queries, its peak backends counted in `pg_stat_activity` (the pool's ceiling plus LISTEN);
 * - MCP session rows: real Streamable HTTP sessions opened on a real `quiver serve`, each with
 *   one search, then the `mcp_sessions` rows' average size and the table's size on disk.
 * Needs QUIVER_BENCH_DATABASE_URL (or QUIVER_TEST_DATABASE_URL): a server where it may create
 * and drop a database. The listener counts are capped below the server's free connections.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp } from '../../app.ts';
import { loadConfig } from '../../config.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUIVER_BIN, percentileMs, round3 } from './bench-home.ts';

/** Options of `benchNotifyFanout`. */
export interface NotifyFanoutOptions {
  databaseUrl?: string;
  /** Listener counts to measure (default 1, 10, 50, 90; capped by free connections). */
  listeners?: number[];
  /** Notifications per listener count (default 50). */
  rounds?: number;
  /** MCP sessions opened for the session-row figures (default 20). */
  sessions?: number;
}

/** Fan-out figures for one listener count. */
export interface FanoutFigures {
  listeners: number;
  /** Sending the notification until the last listener has it. */
  deliveryP50Ms: number;
  deliveryP99Ms: number;
  /** The sender's `SELECT pg_notify(...)` round trip alone. */
  sendP50Ms: number;
}

function databaseUrlFor(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** One round: notify, and wait until every listener has seen this payload. */
async function fanoutRound(sender: pg.Client, listeners: pg.Client[], channel: string, payload: string): Promise<{ deliveryMs: number; sendMs: number }> {
  const started = performance.now();
  const delivered = Promise.all(
    listeners.map(
      (client) =>
        new Promise<void>((resolve) => {
          const onNotification = (message: pg.Notification) => {
            if (message.payload !== payload) return;
            client.off('notification', onNotification);
            resolve();
          };
          client.on('notification', onNotification);
        }),
    ),
  );
  await sender.query('SELECT pg_notify($1, $2)', [channel, payload]);
  const sendMs = performance.now() - started;
  await delivered;
  return { deliveryMs: performance.now() - started, sendMs };
}

async function measureFanout(url: string, count: number, rounds: number): Promise<FanoutFigures> {
  const channel = 'quiver_bench_fanout';
  const listeners = await Promise.all(Array.from({ length: count }, async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    return client;
  }));
  const sender = new pg.Client({ connectionString: url });
  await sender.connect();
  try {
    const delivery: number[] = [];
    const send: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const result = await fanoutRound(sender, listeners, channel, `${count}:${round}`);
      delivery.push(result.deliveryMs);
      send.push(result.sendMs);
    }
    delivery.sort((a, b) => a - b);
    send.sort((a, b) => a - b);
    return { listeners: count, deliveryP50Ms: percentileMs(delivery, 50), deliveryP99Ms: percentileMs(delivery, 99), sendP50Ms: percentileMs(send, 50) };
  } finally {
    await Promise.allSettled([sender.end(), ...listeners.map((client) => client.end())]);
  }
}

/** Peak backends a real app opens on `database` under 100 concurrent queries. */
async function measureReplicaConnections(admin: pg.Client, url: string, database: string): Promise<{ peakConnections: number; idleConnections: number; key: string }> {
  const app = await createApp(loadConfig({ HOME: process.env.HOME, QUIVER_DATABASE_URL: url, QUIVER_LOG_LEVEL: 'silent' }));
  try {
    const count = async () => Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [database])).rows[0]!.n);
    const idleConnections = await count();
    let peakConnections = idleConnections;
    const load = Promise.all(Array.from({ length: 100 }, () => app.db.query('SELECT pg_sleep(0.05)')));
    const sampler = setInterval(() => void count().then((n) => (peakConnections = Math.max(peakConnections, n))), 10);
    await load;
    clearInterval(sampler);
    peakConnections = Math.max(peakConnections, await count());
    // The key the session measurement's clients use, made while an app is open anyway.
    const { key } = await app.apiKeys.create({ name: 'bench sessions', scopes: ['mcp'] });
    return { peakConnections, idleConnections, key };
  } finally {
    await app.close();
  }
}

/** Starts `quiver serve` on the database; resolves with its URL once it listens. */
async function startServer(url: string, home: string): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, [QUIVER_BIN, 'serve', '--http', '127.0.0.1:0', '--json'], {
    env: { ...process.env, QUIVER_HOME: home, QUIVER_DATABASE_URL: url, QUIVER_LOG_LEVEL: 'silent', QUIVER_MCP_SESSIONS: 'database' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const line = out.split('\n').find((candidate) => candidate.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('close', (code) => reject(new Error(`quiver serve exited with ${code}`)));
  });
  return { child, baseUrl };
}

/** Opens real MCP sessions with one search each; the `mcp_sessions` rows' size afterwards. */
async function measureSessionRows(url: string, key: string, sessions: number): Promise<Record<string, unknown>> {
  const home = mkdtempSync(join(tmpdir(), 'quiver-bench-sessions-'));
  const { child, baseUrl } = await startServer(url, home);
  const clients: McpClient[] = [];
  try {
    for (let index = 0; index < sessions; index++) {
      const client = new McpClient({ name: `bench-${index}`, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      await client.callTool({ name: 'search_tools', arguments: { query: `find a tool for task ${index}` } });
      clients.push(client);
    }
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const exists = (await db.query("SELECT to_regclass('mcp_sessions') IS NOT NULL AS present")).rows[0]?.present === true;
      if (!exists) return { unavailable: 'this build has no mcp_sessions table' };
      const row = (await db.query<{ n: string; avg: string | null; table_bytes: string }>("SELECT count(*) AS n, avg(pg_column_size(s.*)) AS avg, pg_total_relation_size('mcp_sessions') AS table_bytes FROM mcp_sessions s")).rows[0]!;
      const rows = Number(row.n);
      return { sessions, rows, avgRowBytes: row.avg === null ? null : Math.round(Number(row.avg)), tableBytesWithIndexes: Number(row.table_bytes), bytesPerSessionOnDisk: rows > 0 ? Math.round(Number(row.table_bytes) / rows) : null };
    } finally {
      await db.end();
    }
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    const closed = once(child, 'close');
    child.kill('SIGTERM');
    await closed;
    rmSync(home, { recursive: true, force: true });
  }
}

/** Runs the three measurements on a fresh database; `unavailable` without a PostgreSQL URL. */
export async function benchNotifyFanout(options: NotifyFanoutOptions = {}): Promise<Record<string, unknown>> {
  const adminUrl = options.databaseUrl ?? process.env.QUIVER_BENCH_DATABASE_URL ?? process.env.QUIVER_TEST_DATABASE_URL;
  if (!adminUrl) return { unavailable: 'set QUIVER_BENCH_DATABASE_URL to a PostgreSQL server where the bench may create a database' };
  const database = `quiver_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
    const url = databaseUrlFor(adminUrl, database);
    const limits = (await admin.query<{ max: string; used: string }>("SELECT current_setting('max_connections') AS max, (SELECT count(*) FROM pg_stat_activity) AS used")).rows[0]!;
    const free = Number(limits.max) - Number(limits.used) - 15;
    const wanted = options.listeners ?? [1, 10, 50, 90];
    const counts = wanted.filter((count) => count <= free);
    const fanout: FanoutFigures[] = [];
    for (const count of counts) fanout.push(await measureFanout(url, count, options.rounds ?? 50));
    const { key, ...connections } = await measureReplicaConnections(admin, url, database);
    const sessions = await measureSessionRows(url, key, options.sessions ?? 20).catch((error: unknown) => ({ unavailable: error instanceof Error ? error.message : String(error) }));
    return {
      server: { maxConnections: Number(limits.max), listenerCountsSkipped: wanted.filter((count) => count > free) },
      fanout,
      perReplica: { ...connections, note: 'pool of 10 (store/postgres-database.ts) including the LISTEN connection' },
      sessionRows: sessions,
      fanoutGrowth: fanout.length >= 2 ? round3(fanout.at(-1)!.deliveryP50Ms / Math.max(0.001, fanout[0]!.deliveryP50Ms)) : null,
    };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}
