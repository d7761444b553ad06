/**
 * Issue #16: a plugin's declared rate limit and concurrency cap hold across replicas. The SQL
 * (atomic token buckets, expiring slot leases) runs on both engines; then real apps with real
 * sandboxed plugin processes: on PostgreSQL two App instances, each with its own pool and its own
 * plugin process, share one limit; on PGlite one app keeps the in-memory limiters (no rows).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import type { UpstreamSpec } from '../../src/runtime/types.ts';
import type { Database } from '../../src/store/database.ts';
import {
  claimConcurrencySlot,
  countConcurrencyLeases,
  releaseConcurrencySlot,
  renewConcurrencySlot,
  takeSharedTokens,
} from '../../src/store/repositories/shared-limits.ts';
import { createSharedLimits } from '../../src/runtime/replica-limits.ts';
import { openStore } from '../../src/store/open.ts';
import { createScratchDatabase, describeEachBackend, type ScratchDatabase } from '../helpers/backends.ts';
import { createProfilePlugin } from './execution-profile-fixture.ts';
import { firstText } from './helpers.ts';

const RATE = { requestsPerSecond: 1, burst: 4 };
const slowRefill = (scope: string, capacity: number) => ({ scope, capacity, ratePerMs: 1 / 60_000 });

describeEachBackend('shared limits SQL', (backend) => {
  let db: Database;
  before(async () => {
    db = await backend.open();
  });
  after(async () => {
    await db.close();
  });

  it('never hands out more tokens than the bucket holds, however many take at once', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => takeSharedTokens(db, [slowRefill('p-burst', 5)])));
    assert.equal(results.filter((result) => result.ok).length, 5);
    const refused = results.find((result) => !result.ok) as { retryAfterMs: number };
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 60_000, `retry after ${refused.retryAfterMs} ms`);
  });

  it('takes from every bucket or from none, and refills with time', async () => {
    assert.equal((await takeSharedTokens(db, [slowRefill('p-all', 3), slowRefill('p-all/tool', 1)])).ok, true);
    assert.equal((await takeSharedTokens(db, [slowRefill('p-all', 3), slowRefill('p-all/tool', 1)])).ok, false, 'the tool bucket is empty');
    assert.equal((await takeSharedTokens(db, [slowRefill('p-all', 3)])).ok, true, 'the refused call took nothing from the plugin bucket');
    assert.equal((await takeSharedTokens(db, [slowRefill('p-all', 3)])).ok, true);
    assert.equal((await takeSharedTokens(db, [slowRefill('p-all', 3)])).ok, false);

    const fast = { scope: 'p-fast', capacity: 1, ratePerMs: 1 / 200 }; // one token per 200 ms
    assert.equal((await takeSharedTokens(db, [fast])).ok, true);
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal((await takeSharedTokens(db, [fast])).ok, true, 'refilled on the database clock');
  });

  it('gives each slot to one holder, frees it on release, and lets an unrenewed lease lapse', async () => {
    const claim = (holder: string, ttlMs = 10_000) => claimConcurrencySlot(db, { scope: 'p-slots', limit: 2, holder, ttlMs });
    const claims = await Promise.all(['a', 'b', 'c', 'd'].map((holder) => claim(holder)));
    // Two claimers may race for the same free slot: the loser gets none (and a real caller polls again).
    assert.ok(claims.filter((slot) => slot !== undefined).length <= 2, `claimed ${JSON.stringify(claims)}`);
    for (let index = 0; index < claims.length && claims.filter((slot) => slot !== undefined).length < 2; index += 1) {
      if (claims[index] === undefined) claims[index] = await claim(['a', 'b', 'c', 'd'][index]!);
    }
    assert.equal(claims.filter((slot) => slot !== undefined).length, 2);
    assert.equal(new Set(claims.filter((slot) => slot !== undefined)).size, 2, 'two holders never share a slot');
    assert.equal(await countConcurrencyLeases(db, 'p-slots'), 2);
    const holderOf = (index: number) => ['a', 'b', 'c', 'd'][index]!;
    const winner = claims.findIndex((slot) => slot !== undefined);
    assert.equal(await renewConcurrencySlot(db, { scope: 'p-slots', slot: claims[winner]!, holder: holderOf(winner), ttlMs: 10_000 }), true);
    assert.equal(await renewConcurrencySlot(db, { scope: 'p-slots', slot: claims[winner]!, holder: 'someone-else', ttlMs: 10_000 }), false);
    await releaseConcurrencySlot(db, { scope: 'p-slots', slot: claims[winner]!, holder: holderOf(winner) });
    assert.notEqual(await claim('e'), undefined, 'a released slot is free again');
    assert.equal(await claim('f'), undefined);

    // A replica that died holding a short lease: its slot comes free when the lease lapses.
    assert.notEqual(await claimConcurrencySlot(db, { scope: 'p-dead', limit: 1, holder: 'dead', ttlMs: 1_500 }), undefined);
    assert.equal(await claimConcurrencySlot(db, { scope: 'p-dead', limit: 1, holder: 'alive', ttlMs: 10_000 }), undefined);
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    assert.notEqual(await claimConcurrencySlot(db, { scope: 'p-dead', limit: 1, holder: 'alive', ttlMs: 10_000 }), undefined);
  });
});

describe('shared limiters when the database fails', () => {
  it('fall back to this replica\'s own limiter instead of failing or letting everything through', async () => {
    const { db: real } = await openStore({ kind: 'memory' });
    // A real database that becomes unreachable: every query fails from `down` on.
    let down = false;
    const unreachable = () => Promise.reject(new Error('connect ECONNREFUSED'));
    const db: Database = {
      ...real,
      query: (sql, params) => (down ? unreachable() : real.query(sql, params)),
      transaction: (work) => (down ? unreachable() : real.transaction(work)),
    } as Database;
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_context: object, message?: string) => void warnings.push(message ?? ''), child: () => logger };
    const shared = createSharedLimits({ db, logger, leaseTtlMs: 1_000, pollMs: 5 });
    const bucket = { scope: 'p', config: { requestsPerMinute: 60, burst: 1 } };
    assert.deepEqual(await shared.take([bucket], () => ({ ok: false, retryAfterMs: 7 })), { ok: true }, 'the database answers first');
    const semaphore = shared.semaphore('p', 1, 1, "plugin 'p'");
    const release = await semaphore.acquire();
    await assert.rejects(semaphore.acquire(AbortSignal.timeout(100)), 'the one slot is held');
    release();
    down = true;
    assert.deepEqual(await shared.take([bucket], () => ({ ok: false, retryAfterMs: 7 })), { ok: false, retryAfterMs: 7 }, 'the fallback decides');
    const local = await semaphore.acquire();
    await assert.rejects(semaphore.acquire(AbortSignal.timeout(50)), 'the local semaphore still caps at 1');
    local();
    assert.equal(warnings.length, 1, 'warned once, not per call');
    await real.close();
  });
});

/** Calls `echo` `perApp` times at once from every app; counts successes and checks every refusal is `rate_limited`. */
async function burstOfCalls(replicas: Array<{ app: App; spec: UpstreamSpec }>, perApp: number): Promise<{ ok: number; elapsedMs: number }> {
  const startedAt = performance.now();
  const settled = await Promise.allSettled(replicas.flatMap(({ app, spec }) => Array.from({ length: perApp }, () => app.supervisor.callTool(spec, 'echo', { text: 'x' }))));
  const elapsedMs = performance.now() - startedAt;
  for (const result of settled) if (result.status === 'rejected') assert.ok(isQuiverError(result.reason, 'rate_limited'), String(result.reason));
  return { ok: settled.filter((result) => result.status === 'fulfilled').length, elapsedMs };
}

/** Runs two `stamp` calls of 300 ms from every app at once; returns the intervals the plugin processes measured. */
async function overlappingCalls(replicas: Array<{ app: App; spec: UpstreamSpec }>): Promise<Array<{ start: number; end: number }>> {
  const results = await Promise.all(
    replicas.flatMap(({ app, spec }) => [0, 1].map(() => app.supervisor.callTool(spec, 'stamp', { ms: 300 }, { timeoutMs: 20_000 }))),
  );
  return results.map((result) => JSON.parse(firstText(result)) as { start: number; end: number }).sort((a, b) => a.start - b.start);
}

function assertLimitsHeld(run: { ok: number; elapsedMs: number }, intervals: Array<{ start: number; end: number }>, calls: number): void {
  const bound = RATE.burst + Math.ceil(RATE.requestsPerSecond * (run.elapsedMs / 1000));
  assert.ok(run.ok >= RATE.burst, `only ${run.ok} calls succeeded; a full bucket allows ${RATE.burst}`);
  assert.ok(run.ok <= bound, `${run.ok} calls succeeded in ${Math.round(run.elapsedMs)} ms; the limit allows ${bound}`);
  assert.equal(intervals.length, calls);
  for (let index = 1; index < intervals.length; index += 1) {
    assert.ok(intervals[index]!.start >= intervals[index - 1]!.end, `calls overlapped: ${JSON.stringify(intervals)}`);
  }
}

describeEachBackend('declared limits across replicas', (backend) => {
  let home: string;
  let databaseUrl = 'memory://';
  let scratch: ScratchDatabase | undefined;
  const apps: App[] = [];

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-shared-limits-'));
    await chmod(home, 0o755); // sandboxed plugins run as an unprivileged user
    if (backend.name === 'postgres') {
      scratch = await createScratchDatabase();
      databaseUrl = scratch.url;
    }
    // Two replicas on PostgreSQL (each its own pool and plugin processes); one node on PGlite.
    for (const replica of backend.name === 'postgres' ? ['a', 'b'] : ['a']) {
      apps.push(await createApp(loadConfig({ QUIVER_HOME: join(home, replica), QUIVER_DATABASE_URL: databaseUrl, QUIVER_LOG_LEVEL: 'silent' })));
    }
    const sources = join(home, 'sources');
    await apps[0]!.plugins.add(await createProfilePlugin(sources, 'rated', { safety: { rateLimits: RATE } }), { name: 'rated' });
    await apps[0]!.plugins.add(await createProfilePlugin(sources, 'single', { safety: { rateLimits: { maxConcurrent: 1 } } }), { name: 'single' });
  });

  after(async () => {
    for (const app of apps) await app.close();
    await scratch?.drop();
    await rm(home, { recursive: true, force: true });
  });

  it(`holds ${RATE.requestsPerSecond}/s (burst ${RATE.burst}) and one call at a time across every replica`, { timeout: 120_000 }, async () => {
    const rated = await Promise.all(apps.map(async (app) => ({ app, spec: await app.plugins.upstreamSpec('rated') })));
    const single = await Promise.all(apps.map(async (app) => ({ app, spec: await app.plugins.upstreamSpec('single') })));
    assert.deepEqual(rated[0]!.spec.execution.rateLimits?.plugin, { requestsPerMinute: 60, burst: 4 });
    assert.equal(single[0]!.spec.execution.concurrency?.plugin, 1);
    // Start every plugin process first (a listing takes no token), so the burst is not spread by start-up.
    for (const { app, spec } of [...rated, ...single]) await app.supervisor.listTools(spec);

    const run = await burstOfCalls(rated, 24 / apps.length);
    const intervals = await overlappingCalls(single);
    assertLimitsHeld(run, intervals, 2 * apps.length);

    const { rows } = await apps[0]!.db.query<{ buckets: number }>('SELECT count(*)::int AS buckets FROM runtime_rate_buckets');
    if (backend.name === 'postgres') assert.equal(Number(rows[0]!.buckets), 1, 'one bucket row for the plugin, shared by both replicas');
    else assert.equal(Number(rows[0]!.buckets), 0, 'the embedded store keeps limits in memory');
  });
});
