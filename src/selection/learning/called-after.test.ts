/**
 * "Called after" (issue #25): a tool called after another in successful sessions of an
 * organisation is pulled in when the first ranks at the top; through the selection engine's REST
 * path on every backend, with the guards of learned examples (failed and loop-flagged calls teach
 * nothing, per organisation, distinct contributors), plus the pure parts.
 */
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import { LEARNING_TOOLS, CLEAR_REQUEST } from '../../../test/learning/catalog-fixture.ts';
import type { Database } from '../../store/database.ts';
import { createCatalogService } from '../../catalog/index.ts';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { createSelectionEngine, type SelectionEngine } from '../engine.ts';
import { createLexicalRetrieval } from '../retrieval.ts';
import { createSeededRandom } from '../random.ts';
import { buildCalledAfter, createSessionTrail, pullSuccessors, transitionsOf } from './called-after.ts';
import { createLearning, withLearnedExamples, type Learning } from './index.ts';

describe('called after: parts', () => {
  it('pairs earlier calls with later ones, and tools called together both ways', () => {
    assert.deepEqual(transitionsOf(['a'], ['b']), [['a', 'b']]);
    assert.deepEqual(transitionsOf([], ['a', 'b']), [['a', 'b'], ['b', 'a']]);
    assert.deepEqual(transitionsOf(['a'], ['a']), []);
  });

  it('forgets a session after its time and keeps a bounded number', () => {
    const trail = createSessionTrail({ ttlMs: 1000, maxSessions: 2, toolsPerSession: 2 });
    trail.remember('s1', ['a', 'b', 'c'], 0);
    assert.deepEqual(trail.previous('s1', 500), ['b', 'c']);
    assert.deepEqual(trail.previous('s1', 1500), []);
    trail.remember('s2', ['x'], 0);
    trail.remember('s3', ['y'], 0);
    assert.deepEqual(trail.previous('s1', 10), [], 'the oldest session went out');
  });

  it('pulls a supported successor below its consumer, only where the caller may see it', () => {
    const overlay = buildCalledAfter([{ fromTool: 'read', toTool: 'write', contributors: 3 }, { fromTool: 'read', toTool: 'delete', contributors: 1 }]);
    const ranked = [{ id: 'read', score: 1 }, { id: 'list', score: 0.5 }, { id: 'stat', score: 0.4 }];
    const pulled = pullSuccessors(ranked, overlay, { k: 3, candidateIds: new Set(['read', 'list', 'stat', 'write', 'delete']) });
    assert.deepEqual(pulled.map((hit) => hit.id), ['read', 'write', 'list']);
    assert.ok(Math.abs(pulled[1]!.score - 0.8) < 1e-9, 'three contributors: full pull, 0.8 of the consumer');
    // One contributor weighs a third: 0.27 of the consumer, below 'list' here.
    assert.deepEqual(pullSuccessors(ranked, overlay, { k: 5, candidateIds: new Set(['read', 'list', 'stat', 'write', 'delete']) }).map((hit) => hit.id), ['read', 'write', 'list', 'stat', 'delete']);
    assert.ok(!pullSuccessors(ranked, overlay, { k: 5, candidateIds: new Set(['read', 'list', 'stat']) }).some((hit) => hit.id === 'write'), 'not visible: not added');
    assert.deepEqual(pullSuccessors([{ id: 'other', score: 1 }, { id: 'read', score: 0.5 }], overlay, { k: 3, candidateIds: new Set(['write']) }).map((hit) => hit.id), ['other', 'read'], 'a consumer far below the best pulls nothing');
  });
});

describeEachBackend('called after through the engine (issue #25)', (backend) => {
  let db: Database;
  let learning: Learning;
  let engine: SelectionEngine;
  const now = new Date('2026-01-01T00:00:00Z');
  // "mail alice the summary" shares no content word with the weather request, so the learned
  // example of send_email cannot be what lifts it: only the transition can.
  const NEXT = 'mail alice the summary';

  before(async () => {
    db = await backend.open();
    const catalog = createCatalogService({ db });
    await catalog.syncPlugin({ pluginId: 'kit', version: '1.0.0', tools: LEARNING_TOOLS.map((tool) => ({ ...tool })) });
    learning = createLearning({ db, embedder: createOfflineEmbedder(), clock: () => now, settings: { sweepIntervalMs: 0 } });
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

  const top = async (query: string, orgId: string, k = 3) =>
    (await engine.selectTools({ query, k, log: false, context: { orgId, userId: 'reader' } })).tools.map((tool) => tool.name);
  /** In one session: a request calling `tool`. */
  const call = async (query: string, tool: string, orgId: string, userId: string, sessionId: string, outcome: { success?: boolean; flagged?: boolean } = {}) => {
    const result = await engine.selectTools({ query, k: 10, context: { orgId, userId, sessionId } });
    const name = `kit__${tool}`;
    assert.ok(result.tools.some((t) => t.qualifiedName === name), `${tool} was offered`);
    await engine.recordOutcome(result.metadata.eventId!, { toolsCalled: [name], success: outcome.success ?? true, ...(outcome.flagged ? { flaggedTools: [name] } : {}) });
    await engine.flush();
  };

  it('three users who mail after the forecast teach their organisation to offer the mail tool with it', async () => {
    const control = await top(CLEAR_REQUEST, 'org-a');
    assert.equal(control[0], 'weather_forecast');
    assert.ok(!control.includes('send_email'), control.join(', '));
    // Failed and loop-flagged follow-ups teach nothing.
    await call(CLEAR_REQUEST, 'weather_forecast', 'org-a', 'u0', 's0');
    await call(NEXT, 'send_email', 'org-a', 'u0', 's0', { success: false });
    await call(NEXT, 'send_email', 'org-a', 'u0', 's0', { flagged: true });
    assert.equal(learning.stats().transitions, 0);
    for (const user of ['u1', 'u2', 'u3']) {
      await call(CLEAR_REQUEST, 'weather_forecast', 'org-a', user, `s-${user}`);
      await call(NEXT, 'send_email', 'org-a', user, `s-${user}`);
    }
    learning.calledAfterFor('org-a');
    await learning.flush();
    const taught = await top(CLEAR_REQUEST, 'org-a');
    assert.deepEqual(taught.slice(0, 2), ['weather_forecast', 'send_email'], taught.join(', '));
    assert.deepEqual(await top(CLEAR_REQUEST, 'org-b'), control, 'another organisation learned nothing');
  });

  it('the same calls in separate sessions teach no transition', async () => {
    for (const user of ['v1', 'v2', 'v3']) {
      await call(CLEAR_REQUEST, 'weather_forecast', 'org-c', user, `a-${user}`);
      await call(NEXT, 'send_email', 'org-c', user, `b-${user}`);
    }
    learning.calledAfterFor('org-c');
    await learning.flush();
    assert.ok(!(await top(CLEAR_REQUEST, 'org-c')).includes('send_email'));
  });

  it('one user repeating the sequence counts once', async () => {
    for (let i = 0; i < 4; i++) {
      await call(CLEAR_REQUEST, 'weather_forecast', 'org-d', 'flood', 's-flood');
      await call(NEXT, 'send_email', 'org-d', 'flood', 's-flood');
    }
    learning.calledAfterFor('org-d');
    await learning.flush();
    const ranking = (await engine.selectTools({ query: CLEAR_REQUEST, k: 10, log: false, context: { orgId: 'org-d', userId: 'reader' } })).tools;
    const weather = ranking.find((tool) => tool.name === 'weather_forecast')!;
    const mail = ranking.find((tool) => tool.name === 'send_email')!;
    assert.ok(mail.score <= weather.score * 0.8 * 0.34 + 1e-9, `one contributor pulls a third at most: ${mail.score} vs ${weather.score}`);
  });
});
