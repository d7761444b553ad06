import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { BatchStatement, Database } from '../database.ts';
import { addTool } from '../../selection/test-fixtures.ts';
import { setLearningBlocked, writeLearnedExample, type LearnedExampleWrite } from './learned-examples.ts';

describeEachBackend('learned example caps (issue #28: one trim statement, one batch)', (backend) => {
  let db: Database;
  before(async () => {
    db = await backend.open();
  });
  after(async () => {
    await db.close();
  });

  /** `db` whose batches are recorded (one entry per batch, its statements' SQL). */
  const recording = (batches: string[][]): Database => ({
    ...db,
    batch(statements: readonly BatchStatement[]) {
      batches.push(statements.map((statement) => statement.sql));
      return db.batch(statements);
    },
  });

  describe('writeLearnedExample', () => {
    it('trims the contributor first and the tool over what is left, in one statement after the write, one batch', async () => {
      const toolId = await addTool(db, { name: 'trimmed', description: 'a tool to learn' });
      const caps = { perTool: 3, perContributor: 2 };
      const batches: string[][] = [];
      const write = async (contributor: string, text: string, minute: number) => {
        const written = await writeLearnedExample(
          recording(batches),
          { orgScope: 'org:trim', toolId, text, textKey: text, contributor, source: 'api', at: new Date(Date.UTC(2026, 0, 1, 0, minute)) },
          caps,
        );
        assert.ok(written, 'an unguarded write always writes');
        return written;
      };
      const y1 = await write('user:y', 'y one', 1);
      const x1 = await write('user:x', 'x one', 2);
      await write('user:x', 'x two', 3);
      batches.length = 0;
      // x's third example: the contributor cap removes x one; three rows are left, within the tool's
      // cap, so y one stays (the tool cap counted before the contributor's trim would have taken it).
      const third = await write('user:x', 'x three', 4);
      assert.deepEqual(third.removed, [x1.written.id]);
      assert.equal(batches.length, 1);
      assert.equal(batches[0]!.length, 2, batches[0]!.join('\n---\n'));
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

    it('unlessBlocked: writes and trims unless the tool is blocked in the scope or everywhere; then nothing at all', async () => {
      const toolId = await addTool(db, { name: 'guarded', description: 'a tool whose learning can be off' });
      const other = await addTool(db, { name: 'guarded_other', description: 'another tool' });
      const at = (minute: number) => new Date(Date.UTC(2026, 0, 2, 0, minute));
      const example = (orgScope: string, text: string, minute: number, tool = toolId): LearnedExampleWrite => ({ orgScope, toolId: tool, text, textKey: text, contributor: 'user:g', source: 'gateway', at: at(minute) });
      const caps = { perTool: 10, perContributor: 10 };
      const count = async (orgScope: string, tool = toolId) =>
        (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM learned_examples WHERE org_scope = $1 AND tool_id = $2', [orgScope, tool])).rows[0]!.n;
      for (let i = 0; i < 3; i++) assert.ok(await writeLearnedExample(db, example('org:g', `g ${i}`, i), caps, { unlessBlocked: true }));
      const repeat = await writeLearnedExample(db, example('org:g', 'g 0', 5), caps, { unlessBlocked: true });
      assert.equal(repeat?.written.hits, 2, 'a repeat bumps hits through the guarded write too');
      assert.equal(repeat?.written.lastSeenAt.toISOString(), at(5).toISOString());
      // Blocked in this scope: nothing written, and the trim does not run either (caps lowered to 1 would remove 2 rows).
      await setLearningBlocked(db, 'org:g', toolId, true);
      assert.equal(await writeLearnedExample(db, example('org:g', 'g new', 6), { perTool: 1, perContributor: 1 }, { unlessBlocked: true }), undefined);
      assert.equal(await count('org:g'), 3);
      // Another scope and another tool still learn.
      assert.ok(await writeLearnedExample(db, example('org:h', 'h 0', 7), caps, { unlessBlocked: true }));
      assert.ok(await writeLearnedExample(db, example('org:g', 'o 0', 7, other), caps, { unlessBlocked: true }));
      // Blocked everywhere (org_scope NULL): no scope learns; unblocked: it learns again.
      await setLearningBlocked(db, 'org:g', toolId, false);
      await setLearningBlocked(db, null, toolId, true);
      assert.equal(await writeLearnedExample(db, example('org:h', 'h 1', 8), caps, { unlessBlocked: true }), undefined);
      assert.equal(await writeLearnedExample(db, example('org:g', 'g 9', 8), caps, { unlessBlocked: true }), undefined);
      assert.equal(await count('org:h'), 1);
      // The unguarded write (a taught miss, whose tool already passed the guards) is not checked.
      assert.ok(await writeLearnedExample(db, example('org:h', 'h 2', 9), caps));
      await setLearningBlocked(db, null, toolId, false);
      const learned = await writeLearnedExample(db, example('org:g', 'g 3', 10), { perTool: 2, perContributor: 10 }, { unlessBlocked: true });
      assert.equal(learned?.removed.length, 2, 'caps apply with the guarded write');
      assert.equal(await count('org:g'), 2);
    });
  });
});
