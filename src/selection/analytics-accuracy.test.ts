/**
 * The accuracy time series (issue #13): per UTC day, hit rate, top-1 rate and MRR of the
 * called tool in the offered ranking, computed from recorded outcomes, on both backends.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { createSelectionEngine, type SelectionEngine } from './engine.ts';
import { createSeededRandom } from './random.ts';
import { seedFixture } from './test-fixtures.ts';

describeEachBackend('selection analytics: accuracy over time', (backend) => {
  let db: Database;
  let engine: SelectionEngine;
  let now = new Date('2026-03-01T10:00:00Z');

  before(async () => {
    db = await backend.open();
    await seedFixture(db);
    engine = createSelectionEngine({ db, random: createSeededRandom(1), listen: false, clock: () => now });
  });
  after(async () => {
    await engine?.close();
    await db?.close();
  });

  /** One logged selection in org `trend` whose outcome calls the offered tool at `rank` (1-based; 0: a tool not offered; null: no call). */
  async function interaction(rank: number | null): Promise<void> {
    const result = await engine.selectTools({ query: 'github issue', k: 4, context: { orgId: 'trend' } });
    const offered = result.tools.filter((tool) => tool.reason !== 'pinned');
    assert.ok(offered.length >= 3);
    const called = rank === null ? [] : rank === 0 ? ['not_offered'] : [offered[rank - 1]!.qualifiedName];
    await engine.recordOutcome(result.metadata.eventId!, { toolsCalled: called, success: rank !== null });
  }

  it('reports each day’s hit rate, top-1 rate and MRR from the recorded outcomes', async () => {
    // Day 1: ranks 1, 2, not offered, no call → 3 with calls: hits 2, top-1 1, MRR (1 + 1/2 + 0) / 3.
    for (const rank of [1, 2, 0, null]) await interaction(rank);
    now = new Date('2026-03-02T10:00:00Z');
    // Day 2: ranks 1, 1, 3 → hits 3, top-1 2, MRR (1 + 1 + 1/3) / 3.
    for (const rank of [1, 1, 3]) await interaction(rank);
    const { trend } = await engine.analytics.accuracy({ days: 7 }, 'trend');
    assert.deepEqual(trend.map((d) => [d.day, d.outcomes, d.withCalls, d.hits, d.top1]), [
      ['2026-03-01', 4, 3, 2, 1],
      ['2026-03-02', 3, 3, 3, 2],
    ]);
    assert.ok(Math.abs(trend[0]!.mrr! - 0.5) < 1e-9, `day 1 MRR ${trend[0]!.mrr}`);
    assert.ok(Math.abs(trend[1]!.mrr! - 7 / 9) < 1e-9, `day 2 MRR ${trend[1]!.mrr}`);
    assert.ok(Math.abs(trend[0]!.top1Rate! - 1 / 3) < 1e-9);
    assert.equal(trend[1]!.hitRate, 1);
  });

  it('gives null rates on a day whose outcomes had no calls, and nothing for another organisation', async () => {
    now = new Date('2026-03-03T10:00:00Z');
    await interaction(null);
    const { trend } = await engine.analytics.accuracy({ days: 7 }, 'trend');
    const day3 = trend.find((d) => d.day === '2026-03-03')!;
    assert.deepEqual([day3.withCalls, day3.hitRate, day3.top1Rate, day3.mrr], [0, null, null, null]);
    assert.deepEqual((await engine.analytics.accuracy({ days: 7 }, 'someone-else')).trend, []);
  });
});
