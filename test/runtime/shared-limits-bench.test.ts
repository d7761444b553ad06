/**
 * The `sharedLimits` section of `quiver bench` (issues #11, #16) runs and reports real figures:
 * a short run on PGlite (and PostgreSQL when QUIVER_TEST_DATABASE_URL is set).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { benchSharedLimits } from '../../src/cli/bench/shared-limits.ts';
import { benchSections } from '../../src/cli/bench/sections.ts';

describe('quiver bench: sharedLimits', () => {
  it('is a bench section and measures the in-memory take and the shared bucket and lease', async () => {
    assert.ok(benchSections.some((section) => section.name === 'sharedLimits'));
    const figures = (await benchSharedLimits({ iterations: 40 })) as {
      inMemoryTakeUs: number;
      pglite: Record<string, number>;
      postgres: Record<string, number | string>;
    };
    assert.ok(figures.inMemoryTakeUs > 0 && figures.inMemoryTakeUs < 1_000);
    for (const key of ['takeP50Ms', 'takeP99Ms', 'claimReleaseP50Ms', 'claimReleaseP99Ms']) {
      assert.ok(figures.pglite[key]! > 0, `${key} measured on PGlite`);
      if (process.env.QUIVER_TEST_DATABASE_URL) assert.ok((figures.postgres[key] as number) > 0, `${key} measured on PostgreSQL`);
    }
    if (!process.env.QUIVER_TEST_DATABASE_URL && !process.env.QUIVER_BENCH_DATABASE_URL) assert.match(String(figures.postgres['unavailable']), /QUIVER_BENCH_DATABASE_URL/);
  });
});
