/**
 * @module cli/bench/session-events
 * What resumable SSE costs (issue #16 follow-up): every message a stored session's `/mcp`
 * transport sends on an SSE stream is one `INSERT` into `mcp_session_events` (plus the priming
 * event of each POST stream on protocol 2025-11-25). Measured through the real event store on
 * the embedded database and, when QUIVER_BENCH_DATABASE_URL (or QUIVER_TEST_DATABASE_URL) is set,
 * on a fresh PostgreSQL database: the write per event (p50/p99, sequential, a typical progress
 * notification), and a replay of the last 100 events after a `Last-Event-ID`.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore } from '../../store/open.ts';
import type { Database } from '../../store/database.ts';
import { createSessionStore } from '../../sessions/index.ts';
import { percentileMs, round3 } from './bench-home.ts';

/** Figures on one database. */
export interface SessionEventFigures {
  engine: 'pglite' | 'postgres';
  events: number;
  writeP50Ms: number;
  writeP99Ms: number;
  writeMeanMs: number;
  /** Replaying the 100 events after one id (one query, 100 sends). */
  replay100Ms: number;
}

async function measure(db: Database, events: number): Promise<SessionEventFigures> {
  const store = createSessionStore({ db, limits: { maxSessions: 10, maxSessionsPerKey: 10, maxSessionsPerOrg: 10, idleTtlMs: 600_000 } });
  try {
    const id = `bench-${randomBytes(4).toString('hex')}`;
    await store.create({ id, identity: { workspace: 'default' }, identityKey: '{}', owner: { key: 'bench', org: null }, protocolVersion: '2025-11-25', client: {}, state: {}, extensions: {} });
    const stream = store.events.forSession(id);
    const times: number[] = [];
    const ids: string[] = [];
    for (let n = 0; n < events; n += 1) {
      const message = { jsonrpc: '2.0' as const, method: 'notifications/progress', params: { progressToken: 'bench', progress: n, total: events, message: `step ${n}` } };
      const started = performance.now();
      ids.push(await stream.storeEvent('bench-stream', message));
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const from = ids[ids.length - 101]!;
    const replayStarted = performance.now();
    let replayed = 0;
    await stream.replayEventsAfter(from, { send: async () => void (replayed += 1) });
    const replay100Ms = performance.now() - replayStarted;
    if (replayed !== 100) throw new Error(`replayed ${replayed} events, expected 100`);
    return {
      engine: db.engine,
      events,
      writeP50Ms: percentileMs(times, 50),
      writeP99Ms: percentileMs(times, 99),
      writeMeanMs: round3(times.reduce((sum, value) => sum + value, 0) / times.length),
      replay100Ms: round3(replay100Ms),
    };
  } finally {
    await store.close();
  }
}

/** Runs the section on the embedded database and, when configured, on PostgreSQL. */
export async function benchSessionEvents(options: { events?: number; databaseUrl?: string } = {}): Promise<{ runs: SessionEventFigures[]; postgres?: string }> {
  const events = options.events ?? 2000;
  const runs: SessionEventFigures[] = [];
  const embedded = await openStore({ kind: 'memory' });
  try {
    runs.push(await measure(embedded.db, events));
  } finally {
    await embedded.db.close();
  }
  const adminUrl = options.databaseUrl ?? process.env.QUIVER_BENCH_DATABASE_URL ?? process.env.QUIVER_TEST_DATABASE_URL;
  if (!adminUrl) return { runs, postgres: 'not measured: set QUIVER_BENCH_DATABASE_URL' };
  const database = `quiver_bench_events_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(adminUrl);
    url.pathname = `/${database}`;
    const opened = await openStore({ kind: 'postgres', url: url.toString() });
    try {
      runs.push(await measure(opened.db, events));
    } finally {
      await opened.db.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
  return { runs };
}
