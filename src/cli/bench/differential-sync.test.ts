/** The differential sync bench `quiver bench` reports: 1,000 tools, 3 changed, on each backend. */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { Database } from '../../store/database.ts';
import { benchDifferentialSync } from './differential-sync.ts';

describeEachBackend('differential sync bench', (backend) => {
  let db: Database;

  before(async () => {
    db = await backend.open();
  });

  after(async () => {
    await db.close();
  });

  it('measures a 1,000-tool differential sync with exactly 3 tools changed and marked stale', async () => {
    const result = await benchDifferentialSync(db);
    assert.equal(result.tools, 1000);
    assert.equal(result.changed, 3);
    assert.equal(result.markedStale, 3);
    assert.ok(result.durationMs > 0);
    const { rows } = await db.query<{ stale: number }>(
      "SELECT count(*) AS stale FROM tools t JOIN plugins p ON p.id = t.plugin_id WHERE p.name = 'bench-sync' AND t.embedding_status = 'stale'",
    );
    assert.equal(rows[0]?.stale, 3);
  });
});
