/**
 * Learned example queries through the selection engine's REST path (recordOutcome), every
 * backend (issue #13): learning lifts a paraphrase to rank 1 in its organisation only; failed,
 * flagged and blocked calls teach nothing; one user's flood weighs a bounded share; caps,
 * redaction, retention and deletion.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import { LEARNING_TOOLS, PARAPHRASE, CLEAR_REQUEST } from '../../../test/learning/catalog-fixture.ts';
import type { Database } from '../../store/database.ts';
import { createCatalogService } from '../../catalog/index.ts';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { createSelectionEngine, type SelectionEngine } from '../engine.ts';
import { createLexicalRetrieval } from '../retrieval.ts';
import { createSeededRandom } from '../random.ts';
import { createLearning, withLearnedExamples, type Learning } from './index.ts';

describeEachBackend('learned example queries (issue #13)', (backend) => {
  let db: Database;
  let learning: Learning;
  let engine: SelectionEngine;
  let now = new Date('2026-01-01T00:00:00Z');
  const ids = new Map<string, string>();

  before(async () => {
    db = await backend.open();
    const catalog = createCatalogService({ db });
    await catalog.syncPlugin({ pluginId: 'kit', version: '1.0.0', tools: LEARNING_TOOLS.map((tool) => ({ ...tool })) });
    for (const tool of LEARNING_TOOLS) ids.set(tool.name, (await catalog.getToolByQualifiedName(`kit__${tool.name}`)).id);
    learning = createLearning({ db, embedder: createOfflineEmbedder(), clock: () => now, settings: { perToolCap: 6, contributorShare: 0.34, retentionDays: 30, sweepIntervalMs: 0 } });
    // No exploration and a fixed seed: the ranking under test is retrieval's, not the bandit's draw.
    engine = createSelectionEngine({
      db,
      listen: false,
      retrieval: withLearnedExamples(createLexicalRetrieval(), learning),
      outcomeObserver: learning,
      random: createSeededRandom(7),
      bandit: { exploration: false, relevanceStrength: 1_000_000 },
      clock: () => now,
    });
  });
  after(async () => {
    await engine.close();
    await learning.close();
    await db.close();
  });

  const ranking = async (query: string, orgId: string | null, userId = 'reader') => {
    const result = await engine.selectTools({ query, k: 10, log: false, context: { orgId, userId } });
    return result.tools.map((tool) => tool.name);
  };
  /** Retrieval scores per tool, order-free (tools tied at 0 are ordered by the bandit's draw). */
  const scores = async (query: string, orgId: string | null) => {
    const result = await engine.selectTools({ query, k: 10, log: false, context: { orgId } });
    return result.tools.map((tool) => `${tool.name}:${tool.score.toFixed(6)}`).sort();
  };
  /** One selection by `userId` in `orgId`, then an outcome calling `tool`. */
  const teach = async (query: string, tool: string, orgId: string | null, userId: string, outcome: { success?: boolean; flagged?: boolean } = {}) => {
    const result = await engine.selectTools({ query, k: 10, context: { orgId, userId, sessionId: `s-${userId}` } });
    const name = `kit__${tool}`;
    assert.ok(result.tools.some((t) => t.qualifiedName === name), `${tool} was offered`);
    await engine.recordOutcome(result.metadata.eventId!, { toolsCalled: [name], success: outcome.success ?? true, ...(outcome.flagged ? { flaggedTools: [name] } : {}) });
    await engine.flush();
  };

  it('a paraphrase misses its tool at first', async () => {
    const first = await ranking(PARAPHRASE, 'org-a');
    assert.notEqual(first[0], 'convert_currency', first.join(', '));
  });

  it('failed and loop-flagged calls teach nothing', async () => {
    await teach(PARAPHRASE, 'convert_currency', 'org-a', 'u1', { success: false });
    await teach(PARAPHRASE, 'convert_currency', 'org-a', 'u2', { flagged: true });
    assert.equal((await learning.list(ids.get('convert_currency')!)).length, 0);
    assert.equal(learning.stats().skipped.failed, 1);
    assert.equal(learning.stats().skipped.flagged, 1);
  });

  it('successful calls by three users lift the paraphrase to rank 1 in their organisation only', async () => {
    const orgB = await scores(PARAPHRASE, 'org-b');
    const noOrg = await scores(PARAPHRASE, null);
    for (const user of ['u1', 'u2', 'u3']) await teach(PARAPHRASE, 'convert_currency', 'org-a', user);
    assert.equal((await ranking(PARAPHRASE, 'org-a', 'someone-else'))[0], 'convert_currency');
    const learned = await scores(PARAPHRASE, 'org-a');
    assert.ok(learned.some((entry) => entry.startsWith('convert_currency:') && !entry.endsWith(':0.000000')), learned.join(', '));
    // A request in the same words, not the same string, benefits too.
    assert.equal((await ranking('How many YEN will my dollars buy?', 'org-a'))[0], 'convert_currency');
    assert.deepEqual(await scores(PARAPHRASE, 'org-b'), orgB, 'another organisation is unchanged');
    assert.deepEqual(await scores(PARAPHRASE, null), noOrg, 'callers without an organisation are their own scope');
    const stored = await learning.list(ids.get('convert_currency')!, 'org-a');
    assert.equal(stored.length, 3);
    assert.deepEqual(new Set(stored.map((row) => row.contributor)), new Set(['user:u1', 'user:u2', 'user:u3']));
    assert.ok(stored.every((row) => row.source === 'api'));
  });

  it('a new service over the same store (a restart, another replica) ranks with what was learned: its floors are calibrated before the overlay is built', async () => {
    const restarted = createLearning({ db, embedder: createOfflineEmbedder(), clock: () => now, settings: { perToolCap: 6, contributorShare: 0.34, retentionDays: 30, sweepIntervalMs: 0 } });
    const other = createSelectionEngine({
      db, listen: false, retrieval: withLearnedExamples(createLexicalRetrieval(), restarted), outcomeObserver: restarted,
      random: createSeededRandom(7), bandit: { exploration: false, relevanceStrength: 1_000_000 }, clock: () => now,
    });
    try {
      const first = await other.selectTools({ query: PARAPHRASE, k: 10, log: false, context: { orgId: 'org-a' } }); // schedules the scope's load
      assert.ok(first.tools.length > 0);
      await restarted.flush();
      assert.equal(restarted.stats().examples, 3);
      assert.ok(restarted.stats().calibration !== undefined, 'loading learned examples calibrated the floors');
      const result = await other.selectTools({ query: PARAPHRASE, k: 10, log: false, context: { orgId: 'org-a' } });
      assert.equal(result.tools[0]?.name, 'convert_currency', result.tools.map((tool) => `${tool.name} ${tool.score}`).join(', '));
      assert.ok(result.tools.every((tool) => Number.isFinite(tool.score)));
    } finally {
      await other.close();
      await restarted.close();
    }
  });

  it("one user's flood cannot make an unrelated tool rank first for others", async () => {
    const before = await ranking(CLEAR_REQUEST, 'org-a');
    assert.equal(before[0], 'weather_forecast');
    for (let i = 0; i < 12; i++) await teach(`${CLEAR_REQUEST} ${i % 2 === 0 ? 'please' : 'now'} ${i}`, 'search_files', 'org-a', 'flooder');
    assert.equal((await ranking(CLEAR_REQUEST, 'org-a', 'victim'))[0], 'weather_forecast');
    // The contributor keeps at most ceil(0.34 × 6) = 3 examples of the tool.
    const flood = await learning.list(ids.get('search_files')!, 'org-a');
    assert.equal(flood.length, 3);
    await learning.remove(ids.get('search_files')!);
  });

  it('caps a tool at perToolCap, evicting the least recently seen; repeats dedupe', async () => {
    const toolId = ids.get('translate_text')!;
    for (let i = 0; i < 8; i++) {
      now = new Date(now.getTime() + 60_000);
      await teach(`translate this letter into language number ${i}`, 'translate_text', 'org-c', `t${i}`);
    }
    now = new Date(now.getTime() + 60_000);
    await teach('Translate this letter into language number 7!', 'translate_text', 'org-c', 't7');
    const rows = await learning.list(toolId, 'org-c');
    assert.equal(rows.length, 6);
    assert.deepEqual(rows.map((row) => row.text).sort(), [2, 3, 4, 5, 6, 7].map((i) => `translate this letter into language number ${i}`).sort().map((text, _, all) => (text.endsWith('7') ? 'Translate this letter into language number 7!' : text)).sort());
    assert.equal(rows.find((row) => row.contributor === 'user:t7')!.hits, 2);
  });

  it('a quarantined tool teaches nothing; a failing quarantine check counts as quarantined', async () => {
    const quarantined = ids.get('stock_quote')!;
    const checked = createLearning({
      db,
      embedder: createOfflineEmbedder(),
      settings: { sweepIntervalMs: 0 },
      isQuarantined: (toolId) => {
        if (toolId === ids.get('tip_calculator')) throw new Error('pin store down');
        return toolId === quarantined;
      },
    });
    const request = { query: 'price of ACME shares and the tip for dinner', orgId: 'org-q', userId: 'q1', sessionId: null };
    checked.observe({ eventId: 'e-q', source: 'api', request, calledToolIds: [quarantined, ids.get('tip_calculator')!, ids.get('bank_balance')!], success: true, flaggedToolIds: [] });
    await checked.flush();
    assert.equal(checked.stats().skipped.quarantined, 2);
    assert.equal((await checked.list(quarantined)).length, 0);
    assert.equal((await checked.list(ids.get('tip_calculator')!)).length, 0);
    assert.equal((await checked.list(ids.get('bank_balance')!, 'org-q')).length, 1);
    await checked.remove(ids.get('bank_balance')!);
    await checked.close();
  });

  it('redacts before storing', async () => {
    await teach('send the invoice to alice@example.com and call +44 20 7946 0958', 'send_email', 'org-d', 'r1');
    const [row] = await learning.list(ids.get('send_email')!, 'org-d');
    assert.equal(row!.text, 'send the invoice to <email> and call <phone>');
  });

  it('disable hides and stops learning; enable restores', async () => {
    const toolId = ids.get('convert_currency')!;
    await learning.setEnabled(toolId, false, 'org-a');
    // Retrieval scores as in an organisation that learned nothing (the bandit keeps its own record).
    assert.deepEqual(await scores(PARAPHRASE, 'org-a'), await scores(PARAPHRASE, 'org-none'));
    await teach(PARAPHRASE, 'convert_currency', 'org-a', 'u9');
    assert.equal((await learning.list(toolId, 'org-a')).length, 3, 'a blocked tool learns nothing');
    assert.deepEqual(await learning.blocks(toolId), ['org-a']);
    await learning.setEnabled(toolId, true, 'org-a');
    assert.equal((await ranking(PARAPHRASE, 'org-a'))[0], 'convert_currency');
    // Without an organisation: every scope, at once.
    await learning.setEnabled(toolId, false);
    assert.deepEqual(await learning.blocks(toolId), [null]);
    assert.deepEqual(await scores(PARAPHRASE, 'org-a'), await scores(PARAPHRASE, 'org-none'));
    await learning.setEnabled(toolId, true);
    assert.equal((await ranking(PARAPHRASE, 'org-a'))[0], 'convert_currency');
  });

  it('retention deletes examples not seen for retentionDays; deleting restores the original ranking', async () => {
    const original = await scores(PARAPHRASE, 'org-b');
    now = new Date(now.getTime() + 31 * 86_400_000);
    await teach(PARAPHRASE, 'convert_currency', 'org-b', 'fresh');
    const touched = await learning.sweep();
    assert.ok(touched.includes('org-a') && touched.includes('org-c'), touched.join(','));
    assert.equal((await learning.list(ids.get('convert_currency')!, 'org-a')).length, 0);
    assert.deepEqual(await scores(PARAPHRASE, 'org-a'), await scores(PARAPHRASE, 'org-none'));
    assert.equal((await learning.list(ids.get('convert_currency')!, 'org-b')).length, 1, 'fresh examples stay');
    assert.equal(await learning.remove(ids.get('convert_currency')!, { orgId: 'org-b' }), 1);
    assert.deepEqual(await scores(PARAPHRASE, 'org-b'), original);
  });
});
