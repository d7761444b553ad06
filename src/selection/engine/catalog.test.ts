import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { Database } from '../../store/database.ts';
import { createLexicalRetrieval } from '../retrieval.ts';
import { addTool, slowAnswers } from '../test-fixtures.ts';
import { createCatalogState } from './catalog.ts';

describeEachBackend('selection catalog snapshot', (backend) => {
  let db: Database;
  before(async () => {
    db = await backend.open();
  });
  after(async () => {
    await db?.close();
  });

  it('a caller arriving after an invalidation never gets a load that read the catalog before it', async () => {
    // The first load reads the signature (answered), then the tool list (read, answer held back).
    const slow = slowAnswers(db, 1);
    const state = createCatalogState({ db: slow.db, retrieval: createLexicalRetrieval(), toolsMs: 60_000, now: Date.now, onReload: () => {} });
    const early = state.get();
    await slow.answered;
    await addTool(db, { name: 'late_tool', description: 'Added after the first read.' });
    state.invalidate('tools');
    const late = state.get();
    const sameRound = state.get();
    slow.release();
    const [first, second, third] = await Promise.all([early, late, sameRound]);
    assert.ok(!first.tools.some((tool) => tool.name === 'late_tool'), 'the early load read before the tool existed');
    assert.ok(second.tools.some((tool) => tool.name === 'late_tool'), 'a caller after the invalidation got the stale snapshot');
    // Callers after the same invalidation share one load, and then the snapshot is served from memory.
    assert.equal(third, second);
    assert.equal(await state.get(), second);
  });

  it('a caller arriving while an invalidation\'s load runs waits for it, never the snapshot from before (sees its own write)', async () => {
    // A snapshot in memory, fresh by its TTL.
    const slow = slowAnswers(db, 2);
    const state = createCatalogState({ db: slow.db, retrieval: createLexicalRetrieval(), toolsMs: 60_000, now: Date.now, onReload: () => {} });
    const before = await state.get();
    // A write, its local invalidation, and a load it forced, held after its first read (another caller's, in production).
    await addTool(db, { name: 'written_tool', description: 'Written, then the caches dropped.' });
    state.invalidate('tools');
    const running = state.get();
    await slow.answered;
    // The writer's next read arrives while that load runs: it must wait for it.
    const next = state.get();
    slow.release();
    const [loaded, seen] = await Promise.all([running, next]);
    assert.notEqual(seen, before, 'a caller during the forced load was handed the snapshot from before the write');
    assert.ok(seen.tools.some((tool) => tool.name === 'written_tool'));
    assert.equal(seen, loaded);
  });

  it('a reload keeps the previous copies of every unchanged tool\'s content and reads a changed one afresh', async () => {
    // The index keeps the documents of unchanged tools, so the new snapshot must hold the same objects, not equal ones.
    const keptId = await addTool(db, { name: 'kept_tool', description: 'Its content stays as it was.' });
    const changedId = await addTool(db, { name: 'changed_tool', description: 'Its content is rewritten.' });
    const state = createCatalogState({ db, retrieval: createLexicalRetrieval(), toolsMs: 60_000, now: Date.now, onReload: () => {} });
    const first = await state.get();
    await state.ensureIndex(first);
    await db.query(`UPDATE tools SET description = 'Rewritten.', parameters_schema = '{"type":"object"}'::jsonb, content_hash = 'changed' WHERE id = $1`, [changedId]);
    state.invalidate('tools');
    const second = await state.get();
    assert.notEqual(second, first);
    const [keptBefore, keptAfter] = [first.byId.get(keptId)!, second.byId.get(keptId)!];
    assert.notEqual(keptAfter, keptBefore, 'a new candidate object per reload (its other fields may change)');
    assert.equal(keptAfter.parameters, keptBefore.parameters);
    assert.equal(keptAfter.whenToUse, keptBefore.whenToUse);
    assert.deepEqual(keptAfter.parameters, { type: 'object', properties: { query: { type: 'string', description: 'What to look for' } } });
    const changed = second.byId.get(changedId)!;
    assert.notEqual(changed.parameters, first.byId.get(changedId)!.parameters);
    assert.equal(changed.description, 'Rewritten.');
    assert.deepEqual(changed.parameters, { type: 'object' });
    assert.ok(Object.isFrozen(changed.parameters));
  });
  it('past toolsMs with no invalidation, the snapshot serves at once while one re-check reads, and a change it finds serves after (issue #28)', async () => {
    let clock = 0;
    const slow = slowAnswers(db, 2); // the first load's signature and tool list pass; the re-check's signature is held
    const state = createCatalogState({ db: slow.db, retrieval: createLexicalRetrieval(), toolsMs: 60_000, now: () => clock, onReload: () => {} });
    const before = await state.get();
    await addTool(db, { name: 'another_replica_tool', description: 'Written where no invalidation reaches this process.' });
    clock = 61_000;
    const during = await Promise.race([state.get(), new Promise<'waited'>((resolve) => setImmediate(() => resolve('waited')))]);
    assert.equal(during, before, 'a due re-check made the selection wait for the database');
    await slow.answered;
    assert.equal(await state.get(), before, 'callers during the re-check share it and keep the snapshot');
    slow.release();
    // Whether the re-check has landed or still runs, a caller now gets what it read: it either
    // replaced the snapshot, or the snapshot from before is too old to serve and the caller joins it.
    clock = 121_000;
    const after = await state.get();
    assert.ok(after.tools.some((tool) => tool.name === 'another_replica_tool'), 'the re-check found the change and the next caller got it');
  });

  it('a snapshot unchecked for more than twice toolsMs is not served: the caller waits for the re-check', async () => {
    let clock = 0;
    const state = createCatalogState({ db, retrieval: createLexicalRetrieval(), toolsMs: 60_000, now: () => clock, onReload: () => {} });
    const before = await state.get();
    await addTool(db, { name: 'long_unchecked_tool', description: 'Written while nobody selected for two minutes.' });
    clock = 121_000;
    const after = await state.get();
    assert.notEqual(after, before);
    assert.ok(after.tools.some((tool) => tool.name === 'long_unchecked_tool'));
  });

  it('a background re-check that fails is logged and the snapshot keeps serving until twice toolsMs', async () => {
    let clock = 0;
    let failing = false;
    // The database as the catalog reads it, failing every statement once `failing` is set.
    const flaky = new Proxy(db, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (key !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: unknown[]) => (failing ? Promise.reject(new Error('database gone')) : (value as (...a: unknown[]) => unknown).apply(target, args));
      },
    });
    const warnings: string[] = [];
    const logger = { warn: (_fields: unknown, message: string) => void warnings.push(message) };
    const state = createCatalogState({ db: flaky, retrieval: createLexicalRetrieval(), toolsMs: 60_000, now: () => clock, onReload: () => {}, logger: logger as never });
    const before = await state.get();
    failing = true;
    clock = 61_000;
    assert.equal(await state.get(), before, 'served while the re-check runs');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, ['selection: re-checking the catalog failed; serving the last snapshot']);
    clock = 121_000;
    await assert.rejects(state.get(), /database gone/, 'past twice toolsMs the caller waits for the read and sees it fail');
  });
});
