/**
 * Issue #26: a selection nobody reports on (`quiver select`, an API caller that never calls
 * /outcome) is `pending` while an outcome may still come and `unreported` after that — not
 * "pending" forever. On both backends.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { createSelectionEngine, type SelectionEngine } from './engine.ts';
import { OUTCOME_PENDING_MS } from './analytics.ts';
import { createSeededRandom } from './random.ts';
import { seedFixture } from './test-fixtures.ts';

describeEachBackend('selection analytics: outcomes never reported', (backend) => {
  let db: Database;
  let engine: SelectionEngine;
  let now = new Date('2026-04-01T10:00:00Z');

  before(async () => {
    db = await backend.open();
    await seedFixture(db);
    engine = createSelectionEngine({ db, random: createSeededRandom(1), listen: false, clock: () => now });
  });
  after(async () => {
    await engine?.close();
    await db?.close();
  });

  it('counts a selection without an outcome as pending, then as unreported once its window has passed', async () => {
    const silent = await engine.selectTools({ query: 'github issue', k: 2, context: { orgId: 'quiet' } });
    const reported = await engine.selectTools({ query: 'crm contacts', k: 2, context: { orgId: 'quiet' } });
    await engine.recordOutcome(reported.metadata.eventId!, { toolsCalled: [], success: true });
    assert.ok(silent.metadata.eventId);
    assert.deepEqual((await engine.analytics.metrics({ days: 7 }, 'quiet')).outcomes, [
      { outcome: 'no_call', count: 1 },
      { outcome: 'pending', count: 1 },
    ]);
    now = new Date(now.getTime() + OUTCOME_PENDING_MS + 60_000);
    assert.deepEqual((await engine.analytics.metrics({ days: 7 }, 'quiet')).outcomes, [
      { outcome: 'no_call', count: 1 },
      { outcome: 'unreported', count: 1 },
    ]);
    // A late report still counts as what it says.
    await engine.recordOutcome(silent.metadata.eventId!, { toolsCalled: [], success: true });
    assert.deepEqual((await engine.analytics.metrics({ days: 7 }, 'quiet')).outcomes, [{ outcome: 'no_call', count: 2 }]);
  });
});
