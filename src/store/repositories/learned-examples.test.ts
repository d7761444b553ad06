import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { Database, Queryable } from '../database.ts';
import { addTool } from '../../selection/test-fixtures.ts';
import { upsertLearnedExample } from './learned-examples.ts';

describeEachBackend('learned example caps (issue #28: one trim statement)', (backend) => {
  let db: Database;
  before(async () => {
    db = await backend.open();
  });
  after(async () => {
    await db.close();
  });

  describe('upsertLearnedExample', () => {
    it('trims the contributor first and the tool over what is left, in one statement after the write', async () => {
      const toolId = await addTool(db, { name: 'trimmed', description: 'a tool to learn' });
      const caps = { perTool: 3, perContributor: 2 };
      const statements: string[] = [];
      const write = (contributor: string, text: string, minute: number) =>
        db.transaction((tx) => {
          const recording: Queryable = {
            query<Row>(sql: string, params?: readonly unknown[]) {
              statements.push(sql);
              return tx.query<Row>(sql, params);
            },
          };
          return upsertLearnedExample(
            recording,
            { orgScope: 'org:trim', toolId, text, textKey: text, contributor, source: 'api', at: new Date(Date.UTC(2026, 0, 1, 0, minute)) },
            caps,
          );
        });
      const y1 = await write('user:y', 'y one', 1);
      const x1 = await write('user:x', 'x one', 2);
      await write('user:x', 'x two', 3);
      statements.length = 0;
      // x's third example: the contributor cap removes x one; three rows are left, within the tool's
      // cap, so y one stays (the tool cap counted before the contributor's trim would have taken it).
      const third = await write('user:x', 'x three', 4);
      assert.deepEqual(third.removed, [x1.written.id]);
      assert.equal(statements.length, 2, statements.join('\n---\n'));
      const texts = async () => (await db.query<{ text: string }>(`SELECT text FROM learned_examples WHERE org_scope = 'org:trim' ORDER BY text`)).rows.map((row) => row.text);
      assert.deepEqual(await texts(), ['x three', 'x two', 'y one']);
      // A fourth contributor's example: the tool cap removes the least recently seen (y one).
      const z = await write('user:z', 'z one', 5);
      assert.deepEqual(z.removed, [y1.written.id]);
      assert.deepEqual(await texts(), ['x three', 'x two', 'z one']);
      const x2 = (await db.query<{ id: string }>(`SELECT id FROM learned_examples WHERE org_scope = 'org:trim' AND text = 'x two'`)).rows[0]!.id;
      const x4 = await write('user:x', 'x four', 6);
      assert.deepEqual(x4.removed, [x2]);
      assert.deepEqual(await texts(), ['x four', 'x three', 'z one']);
      // Caps lowered (settings changed): both trims in the same write.
      caps.perTool = 1;
      caps.perContributor = 1;
      const x5 = await write('user:x', 'x five', 7);
      assert.equal(x5.removed.length, 3);
      assert.deepEqual(await texts(), ['x five']);
    });
  });
});
