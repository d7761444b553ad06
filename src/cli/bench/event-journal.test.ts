import { it } from 'node:test';
import assert from 'node:assert/strict';
import { benchEventJournal } from './event-journal.ts';

it('the event journal bench measures appends and single inserts', async () => {
  const result = await benchEventJournal({ events: 20 });
  assert.equal(result.events, 20);
  assert.ok(result.lineBytes > 200);
  for (const figures of [result.journalAppend, result.pgliteInsert]) {
    assert.ok(Number.isFinite(figures.p50Ms) && figures.p50Ms >= 0 && figures.p99Ms >= figures.p50Ms, JSON.stringify(figures));
  }
});
