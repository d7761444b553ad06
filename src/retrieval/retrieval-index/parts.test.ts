import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { QuiverError } from '../../core/errors.ts';
import { createOfflineEmbedder } from '../embedders/offline.ts';
import type { Embedder } from '../embedders/embedder.ts';
import { buildLexicalIndex } from '../lexical-index.ts';
import { terms } from '../tokenizer.ts';
import { TopKCollector } from '../top-k.ts';
import { buildAntiPatterns, demoteByAntiPatterns } from './anti-patterns.ts';
import { createBoundedMemo } from './bounded-memo.ts';
import { candidateMask, type CandidateMasks } from './candidate-mask.ts';
import { fuseScores, lexicalScales } from './fusion.ts';
import { scoreLexically } from './lexical-pass.ts';
import { analyseQuery } from './query-analysis.ts';
import { rankOf } from './ranks.ts';
import { resolveSettings } from './settings.ts';
import { addVectorBonus, clearVectorBonus } from './vector-pass.ts';

const neural: Embedder = { specificationVersion: 'v1', provider: 'test', modelId: 'neural', dimensions: 4, maxBatchSize: 8, embed: async () => [] };

describe('retrieval index settings', () => {
  it('picks embedder-dependent defaults and turns depth "all" into infinity', () => {
    const offline = resolveSettings({}, createOfflineEmbedder());
    assert.equal(offline.vectorWeight, 0.3);
    assert.equal(offline.vectorDepth, 30);
    const other = resolveSettings({}, neural);
    assert.equal(other.vectorWeight, 1);
    assert.equal(other.vectorDepth, Number.POSITIVE_INFINITY);
    assert.equal(resolveSettings({ vectorDepth: 0 }, neural).vectorDepth, 1);
    assert.equal(resolveSettings({ fields: { name: { weight: 7, b: 0 } } }, undefined).fields[0]?.weight, 7);
  });

  it('rejects a negative field weight or b outside [0, 1] as invalid_config', () => {
    for (const field of [{ weight: -1, b: 0.5 }, { weight: 1, b: 1.5 }, { weight: Number.NaN, b: 0.5 }]) {
      assert.throws(() => resolveSettings({ fields: { tags: field } }, undefined), (error: unknown) => error instanceof QuiverError && error.code === 'invalid_config');
    }
  });
});

describe('bounded memo', () => {
  it('keeps at most capacity entries, evicting the oldest first', () => {
    const memo = createBoundedMemo<number>(2);
    assert.equal(memo.set('a', 1), 1);
    memo.set('b', 2);
    memo.set('c', 3);
    assert.equal(memo.size, 2);
    assert.equal(memo.get('a'), undefined);
    assert.equal(memo.get('c'), 3);
    memo.clear();
    assert.equal(memo.get('b'), undefined);
  });

  it('evicts the least recently used entry, so a request that keeps coming back stays (fails with oldest-first)', () => {
    const memo = createBoundedMemo<number>(2);
    memo.set('weather', 1);
    memo.set('email', 2);
    assert.equal(memo.get('weather'), 1, 'used again: now the most recent');
    memo.set('pdf', 3);
    assert.equal(memo.get('email'), undefined, 'the least recently used went');
    assert.deepEqual([memo.get('weather'), memo.get('pdf'), memo.size], [1, 3, 2]);
    memo.set('pdf', 4);
    assert.deepEqual([memo.get('weather'), memo.get('pdf'), memo.size], [1, 4, 2], 'replacing a key evicts nothing');
  });
});

describe('candidate mask', () => {
  const positionOf = new Map([['x', 0], ['y', 1], ['z', 2]]);

  it('marks known candidates, ignores unknown ids, and is undefined when every document is a candidate', () => {
    const masks: CandidateMasks = new WeakMap();
    assert.deepEqual([...candidateMask(masks, positionOf, 3, new Set(['z', 'nope']))!], [0, 0, 1]);
    assert.equal(candidateMask(masks, positionOf, 3, new Set(['x', 'y', 'z', 'nope'])), undefined);
  });

  it('serves a Set from the cache until its size changes', () => {
    const masks: CandidateMasks = new WeakMap();
    const ids = new Set(['x']);
    const first = candidateMask(masks, positionOf, 3, ids);
    assert.equal(candidateMask(masks, positionOf, 3, ids), first);
    ids.add('y');
    assert.deepEqual([...candidateMask(masks, positionOf, 3, ids)!], [1, 1, 0]);
  });
});

describe('query analysis', () => {
  const catalog = buildLexicalIndex([[terms('delete a file')], [terms('search the web')]], [{ weight: 1, b: 0.75 }], 1.2);

  it('splits a multi-intent request into the whole and its clauses, which partition its words', () => {
    const settings = resolveSettings({ conceptWeight: 0 }, undefined);
    let asked = 0;
    const analysis = analyseQuery('Search the web for cats. Then erase the old file.', settings, () => (asked++, catalog));
    assert.equal(analysis.texts.length, 3);
    assert.equal(analysis.wholeIsSum, true);
    assert.equal(asked, 0, 'without expansion the catalog is not needed');
    const single = analyseQuery('Search the web for cats. Then erase the old file.', resolveSettings({ conceptWeight: 0, multiIntent: false }, undefined), () => catalog);
    assert.deepEqual(single.texts, ['Search the web for cats. Then erase the old file.']);
    assert.equal(single.wholeIsSum, false);
  });

  it('adds near-synonyms the catalog has at the concept weight, keeps the whole row the sum of its clauses, and leaves ownTerms unexpanded', () => {
    const settings = resolveSettings({ conceptWeight: 0.15 }, undefined);
    const analysis = analyseQuery('Look up the weather report. Then erase the old file.', settings, () => catalog);
    const clause = analysis.terms[2]!;
    assert.ok(clause.some(({ term, weight }) => term === terms('delete')[0] && weight === 0.15));
    assert.ok(!clause.some(({ term }) => term === terms('discard')[0]), 'a near-synonym the catalog lacks is not added');
    assert.ok(!analysis.ownTerms.some(({ term }) => term === terms('delete')[0]));
    const whole = new Map(analysis.terms[0]!.map(({ term, weight }) => [term, weight]));
    for (const list of analysis.terms.slice(1)) for (const { term } of list) assert.ok(whole.has(term), term);
  });
});

describe('anti-patterns', () => {
  const documents = [
    { id: 'a', name: 'a', description: '' },
    { id: 'b', name: 'b', description: '', whenNotToUse: ['bulk marketing newsletters', '  '] },
  ];

  it('is undefined when no document has a phrase', () => {
    assert.equal(buildAntiPatterns([documents[0]!], 1.2), undefined);
  });

  it('demotes the owner of a covered phrase, and nobody for a query below the threshold', () => {
    const antiPatterns = buildAntiPatterns(documents, 1.2)!;
    assert.deepEqual([...antiPatterns.owner], [1]);
    const scores = Float32Array.from([1, 1]);
    demoteByAntiPatterns(scores, antiPatterns, terms('bulk marketing newsletters').map((term) => ({ term, weight: 1 })), 0.5, 0.6);
    assert.deepEqual([...scores], [1, 0.5]);
    const untouched = Float32Array.from([1, 1]);
    demoteByAntiPatterns(untouched, antiPatterns, [{ term: terms('marketing')[0]!, weight: 1 }], 0.5, 0.6);
    assert.deepEqual([...untouched], [1, 1]);
  });
});

describe('lexical pass, vector pass and fusion', () => {
  const docs = [terms('weather forecast city'), terms('send email message'), terms('weather alerts email')];
  const lexical = buildLexicalIndex(docs.map((d) => [d]), [{ weight: 1, b: 0.75 }], 1.2);
  const size = docs.length;
  const idOrder = Int32Array.from([0, 1, 2]);
  const weighted = (text: string) => terms(text).map((term) => ({ term, weight: 1 }));
  const analysis = { texts: ['w', 'c1', 'c2'], terms: [weighted('weather email'), weighted('weather'), weighted('email')], ownTerms: [], wholeIsSum: true };

  it('computes the whole row as the sum of the clause rows, the same as scoring it directly', () => {
    const summed = new Float32Array(size * 3);
    const direct = new Float32Array(size * 3);
    const bestSummed = scoreLexically(lexical, analysis, size, undefined, summed, undefined);
    const bestDirect = scoreLexically(lexical, { ...analysis, wholeIsSum: false }, size, undefined, direct, undefined);
    for (let i = 0; i < summed.length; i++) assert.ok(Math.abs(summed[i]! - direct[i]!) < 1e-6, `cell ${i}`);
    for (let t = 0; t < 3; t++) assert.ok(Math.abs(bestSummed[t]! - bestDirect[t]!) < 1e-6);
    assert.ok(bestSummed[0]! > 0);
  });

  it('leaves non-candidates out of the best scores and the pools', () => {
    const rows = new Float32Array(size * 3);
    const collectors = [0, 1, 2].map((t) => new TopKCollector(5, rows, t * size, idOrder));
    const mask = Uint8Array.from([1, 1, 0]);
    const best = scoreLexically(lexical, analysis, size, mask, rows, collectors);
    assert.ok(best[0]! < rows[2]!, 'document 2 matches both words but is not a candidate');
    for (const collector of collectors) assert.ok(!collector.result().includes(2));
  });

  it('adds a vector bonus only inside the pools, fuses, and clears the bonus afterwards', () => {
    const rows = new Float32Array(size);
    scoreLexically(lexical, { texts: ['q'], terms: [weighted('weather')], ownTerms: [], wholeIsSum: false }, size, undefined, rows, undefined);
    const { lexicalScale, textMax } = lexicalScales(Float64Array.from([Math.max(...rows)]));
    const matrix = Int8Array.from([1, 0, 0, 1, 0, 1]);
    const bonus = new Float32Array(size);
    const wholeSimilarities = new Map<number, number>();
    const pools = addVectorBonus({
      size, matrix, scales: Float32Array.from([1, 1, 1]), hasVector: Uint8Array.from([1, 1, 1]), queryVectors: [Float32Array.from([0, 1])], mask: Uint8Array.from([1, 1, 0]),
      collectors: undefined, vectorWeight: 0.5, rows, lexicalScale, bonus, textMax, similarities: new Float32Array(size), wholeSimilarities,
    });
    assert.deepEqual(pools.map((pool) => [...Array.from(pool.documents)]), [[0, 1]]);
    assert.deepEqual([...bonus], [0, 0.5, 0], 'only the candidate with a positive similarity gets the bonus');
    assert.deepEqual([...wholeSimilarities], [[0, 0], [1, 1]]);
    const final = new Float32Array(size);
    fuseScores({ size, textCount: 1, mask: Uint8Array.from([1, 1, 0]), rows, bonus, lexicalScale, textMax, pools, wholeQueryWeight: 0.3 }, final, new Uint16Array(size));
    assert.equal(final[0], Math.fround(rows[0]! * lexicalScale[0]!));
    assert.equal(final[1], 0.5);
    assert.equal(final[2], 0);
    clearVectorBonus(bonus, pools, size);
    assert.deepEqual([...bonus], [0, 0, 0]);
  });

  it('keeps a tool\'s best clause score plus a share of the whole request', () => {
    const rows = new Float32Array(size * 3);
    const best = scoreLexically(lexical, analysis, size, undefined, rows, undefined);
    const { lexicalScale, textMax } = lexicalScales(best);
    const final = new Float32Array(size);
    const bestClause = new Uint16Array(size);
    fuseScores({ size, textCount: 3, mask: undefined, rows, bonus: new Float32Array(size * 3), lexicalScale, textMax, pools: [], wholeQueryWeight: 0.3 }, final, bestClause);
    // Document 0 is the best 'weather' tool and document 1 the best 'email' tool: each tops a clause.
    for (const d of [0, 1]) assert.ok(final[d]! >= 1, `document ${d} keeps its clause's full score`);
    assert.deepEqual([bestClause[0], bestClause[1]], [1, 2], 'each remembers the clause its score came from');
  });
});

describe('ranks', () => {
  it('ranks among candidates, breaking ties by id order, and says nothing for a document that did not score', () => {
    const scores = Float32Array.from([2, 3, 2, 0]);
    const idOrder = Int32Array.from([1, 3, 0, 2]);
    assert.equal(rankOf(scores, 1, idOrder, undefined), 1);
    assert.equal(rankOf(scores, 0, idOrder, undefined), 3, 'document 2 ties with it and comes first by id');
    assert.equal(rankOf(scores, 0, idOrder, Uint8Array.from([1, 0, 0, 1])), 1);
    assert.equal(rankOf(scores, 3, idOrder, undefined), undefined);
    assert.equal(rankOf(new Map([[2, 0.5], [0, 0.9]]), 2, idOrder, undefined), 2);
    assert.equal(rankOf(new Map([[2, 0.5]]), 1, idOrder, undefined), undefined);
  });
});
