/**
 * @module cli/bench/shared-limits
 * What a declared rate limit or concurrency cap costs per call (issues #11, #16): a token from
 * an in-memory bucket (the embedded store, and every plugin without declared limits pays
 * nothing at all), against the replica-wide bucket and slot lease in the database: PGlite
 * always, PostgreSQL when QUIVER_BENCH_DATABASE_URL (or QUIVER_TEST_DATABASE_URL) names a server,
 * in a fresh database dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createTokenBucket } from '../../runtime/rate-limit.ts';
import { systemClock } from '../../runtime/types.ts';
import type { Database } from '../../store/database.ts';
import { openStore } from '../../store/open.ts';
import { claimConcurrencySlot, releaseConcurrencySlot, takeSharedTokens } from '../../store/repositories/shared-limits.ts';
import { percentileMs, round3 } from './bench-home.ts';

/** Latency of one shared limiter operation on one engine. */
export interface SharedLimitFigures {
  takeP50Ms: number;
  takeP99Ms: number;
  claimReleaseP50Ms: number;
  claimReleaseP99Ms: number;
}

async function timed(times: number, operation: (index: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < times; index += 1) {
    const startedAt = performance.now();
    await operation(index);
    samples.push(performance.now() - startedAt);
  }
  return samples.sort((a, b) => a - b);
}

async function measureDatabase(db: Database, iterations: number): Promise<SharedLimitFigures> {
  // A bucket that never runs dry: every sample is a successful take, the common case.
  const bucket = { scope: 'bench', capacity: 1e9, ratePerMs: 1 };
  const take = await timed(iterations, () => takeSharedTokens(db, [bucket]));
  const lease = await timed(iterations / 2, async (index) => {
    const holder = `bench-${index}`;
    const slot = await claimConcurrencySlot(db, { scope: 'bench', limit: 4, holder, ttlMs: 30_000 });
    if (slot !== undefined) await releaseConcurrencySlot(db, { scope: 'bench', slot, holder });
  });
  return {
    takeP50Ms: percentileMs(take, 50),
    takeP99Ms: percentileMs(take, 99),
    claimReleaseP50Ms: percentileMs(lease, 50),
    claimReleaseP99Ms: percentileMs(lease, 99),
  };
}

async function measurePostgres(adminUrl: string, iterations: number): Promise<SharedLimitFigures> {
  const name = `quiver_bench_limits_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    const { db } = await openStore({ kind: 'postgres', url: url.toString() }, { poolSize: 4 });
    try {
      return await measureDatabase(db, iterations);
    } finally {
      await db.close();
    }
  } finally {
    const dropper = new pg.Client({ connectionString: adminUrl });
    await dropper.connect();
    await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await dropper.end();
  }
}

/** In-memory take cost, and the shared limiters' latency on PGlite and (if configured) PostgreSQL. */
export async function benchSharedLimits(options: { iterations?: number; databaseUrl?: string } = {}): Promise<Record<string, unknown>> {
  const iterations = options.iterations ?? 2_000;
  const memoryBucket = createTokenBucket({ requestsPerMinute: 6_000_000, burst: 1_000_000 }, systemClock);
  const memoryTakes = 200_000;
  const startedAt = performance.now();
  for (let index = 0; index < memoryTakes; index += 1) memoryBucket.take();
  const inMemoryTakeUs = round3(((performance.now() - startedAt) * 1000) / memoryTakes);

  const { db } = await openStore({ kind: 'memory' });
  let pglite: SharedLimitFigures;
  try {
    pglite = await measureDatabase(db, iterations);
  } finally {
    await db.close();
  }
  const adminUrl = options.databaseUrl ?? process.env.QUIVER_BENCH_DATABASE_URL ?? process.env.QUIVER_TEST_DATABASE_URL;
  const postgres = adminUrl ? await measurePostgres(adminUrl, iterations) : { unavailable: 'set QUIVER_BENCH_DATABASE_URL to measure PostgreSQL' };
  return { inMemoryTakeUs, pglite, postgres, iterations };
}
