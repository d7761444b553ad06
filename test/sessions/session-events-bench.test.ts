/**
 * The `sessionEvents` bench section (resumable SSE, issue #16 follow-up) runs end to end on a
 * short configuration: it writes through the real event store, replays 100 events (it throws
 * when the replay does not return exactly those) and reports figures for each database.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchSections } from '../../src/cli/bench/sections.ts';
import { benchSessionEvents } from '../../src/cli/bench/session-events.ts';

test('the sessionEvents bench section measures writes and a replay', async () => {
  assert.ok(benchSections.some((section) => section.name === 'sessionEvents'));
  const result = await benchSessionEvents({ events: 150 });
  const engines = result.runs.map((run) => run.engine);
  assert.ok(engines.includes('pglite'));
  if (process.env.QUIVER_TEST_DATABASE_URL) assert.ok(engines.includes('postgres'));
  for (const run of result.runs) {
    assert.equal(run.events, 150);
    assert.ok(run.writeP50Ms > 0 && run.writeP99Ms >= run.writeP50Ms, JSON.stringify(run));
    assert.ok(run.replay100Ms > 0);
  }
});
