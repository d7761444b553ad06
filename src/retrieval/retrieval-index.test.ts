import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRetrievalIndex } from './retrieval-index.ts';
import { createOfflineEmbedder } from './embedders/offline.ts';
import type { Embedder } from './embedders/embedder.ts';
import type { RetrievalDocument } from './document.ts';

const tools: RetrievalDocument[] = [
  { id: 'weather', name: 'getWeatherForecast', description: 'Weather forecast for a city', parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' } } } },
  { id: 'stocks', name: 'getStockPrice', description: 'Current price of a stock ticker', tags: ['finance'] },
  { id: 'pdf', name: 'pdfToText', description: 'Extract plain text from a PDF document' },
  { id: 'email', name: 'sendEmail', description: 'Send an email message to a recipient', whenNotToUse: ['bulk marketing newsletters to many subscribers'] },
  { id: 'newsletter', name: 'sendNewsletter', description: 'Send a marketing email newsletter to subscribers' },
  { id: 'kids', name: 'learningFun', description: 'Educational games', exampleQueries: ['activities for my 5-year-old', 'my toddler is bored, any ideas?'] },
];

/** An embedder that always fails, to check that search fails open. */
function brokenEmbedder(): Embedder {
  return {
    specificationVersion: 'v1',
    provider: 'test',
    modelId: 'broken',
    dimensions: 8,
    maxBatchSize: 16,
    async embed() {
      throw new Error('model exploded');
    },
  };
}

describe('retrieval index', () => {
  it('ranks the matching tool first, with lexical and vector ranks', async () => {
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build(tools);
    assert.equal(index.size, tools.length);
    assert.ok(index.hasVectors);
    const { results, warnings } = await index.search('what is the weather forecast in Paris?', { k: 3 });
    assert.deepEqual(warnings, []);
    assert.equal(results[0]?.id, 'weather');
    assert.equal(results[0]?.lexicalRank, 1);
    assert.equal(results[0]?.vectorRank, 1);
    assert.ok(results.length <= 3);
  });

  it('uses example queries (Tool2Vec and the examples field)', async () => {
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build(tools);
    const { results } = await index.search('my toddler is bored', { k: 1 });
    assert.equal(results[0]?.id, 'kids');
  });

  it('restricts results to the candidate set', async () => {
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build(tools);
    const { results } = await index.search('weather forecast stock price', { k: 5, candidateIds: new Set(['stocks', 'pdf', 'unknown']) });
    assert.deepEqual(results.map((r) => r.id), ['stocks']);
    const none = await index.search('weather', { candidateIds: new Set() });
    assert.deepEqual(none.results, []);
  });

  it('caches the candidate mask by Set identity, recomputing when the Set or the index changes', async () => {
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build(tools);
    const query = 'send an email then convert a PDF to text and check the weather';
    const unrestricted = await index.search(query, { k: 6 });
    // A Set covering every tool ranks exactly like no restriction, searched twice (cached).
    const everything = new Set(tools.map((tool) => tool.id));
    for (let i = 0; i < 2; i++) assert.deepEqual((await index.search(query, { k: 6, candidateIds: everything })).results, unrestricted.results);
    const some = new Set(['pdf', 'email']);
    for (let i = 0; i < 2; i++) assert.deepEqual((await index.search(query, { k: 6, candidateIds: some })).results.map((r) => r.id).sort(), ['email', 'pdf']);
    // A grown Set is not served from the stale mask.
    some.add('weather');
    assert.ok((await index.search(query, { k: 6, candidateIds: some })).results.some((r) => r.id === 'weather'));
    // After an upsert the same Set is mapped onto the new positions.
    await index.upsert([{ id: 'extra', name: 'convertPdf', description: 'Convert a PDF to text' }]);
    assert.ok((await index.search(query, { k: 6, candidateIds: everything })).results.every((r) => r.id !== 'extra'));
  });

  it('fails open to lexical ranking with a warning when the embedder fails', async () => {
    const index = createRetrievalIndex({ embedder: brokenEmbedder() });
    await index.build(tools);
    assert.equal(index.hasVectors, false);
    assert.match(index.warnings[0] ?? '', /embedder broken failed.*model exploded/);
    const { results, warnings } = await index.search('convert pdf to text');
    assert.equal(results[0]?.id, 'pdf');
    assert.equal(results[0]?.vectorRank, undefined);
    assert.ok(warnings.some((w) => /ranking lexically/.test(w)));
  });

  it('warns and ranks lexically when only the query embedding fails', async () => {
    let calls = 0;
    const offline = createOfflineEmbedder();
    const flaky: Embedder = { ...offline, modelId: offline.modelId, dimensions: offline.dimensions, maxBatchSize: offline.maxBatchSize, async embed(texts) {
      if (calls++ > 0) throw new Error('timeout');
      return offline.embed(texts);
    } };
    const index = createRetrievalIndex({ embedder: flaky });
    await index.build(tools);
    const { results, warnings } = await index.search('send an email');
    assert.equal(results[0]?.id, 'email');
    assert.match(warnings.join(' '), /failed on the query, ranking lexically: timeout/);
  });

  it('demotes a tool whose anti-pattern the query matches', async () => {
    const index = createRetrievalIndex({ options: { antiPatternPenalty: 0 } });
    await index.build(tools);
    const plain = await index.search('send bulk marketing email newsletters to many subscribers', { k: 2 });
    const demoting = createRetrievalIndex({});
    await demoting.build(tools);
    const demoted = await demoting.search('send bulk marketing email newsletters to many subscribers', { k: 2 });
    const emailPlain = plain.results.find((r) => r.id === 'email')!;
    const emailDemoted = demoted.results.find((r) => r.id === 'email')!;
    assert.ok(emailDemoted.score < emailPlain.score * 0.8);
    assert.equal(demoted.results[0]?.id, 'newsletter');
    // A query that does not match the anti-pattern is not demoted.
    const unaffected = await demoting.search('send an email to Bob');
    assert.equal(unaffected.results[0]?.id, 'email');
  });

  it('gives every intent of a multi-intent request a place near the top', async () => {
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build(tools);
    const query = 'Get the weather forecast for Paris and the weather for London. Then extract the text of my PDF document.';
    const { results } = await index.search(query, { k: 2 });
    assert.deepEqual(results.map((r) => r.id).sort(), ['pdf', 'weather']);
  });

  it('supports upsert and remove, re-embedding only what changed', async () => {
    const offline = createOfflineEmbedder();
    const embedded: string[] = [];
    const counting: Embedder = { ...offline, modelId: offline.modelId, dimensions: offline.dimensions, maxBatchSize: offline.maxBatchSize, async embed(texts) {
      embedded.push(...texts);
      return offline.embed(texts);
    } };
    const index = createRetrievalIndex({ embedder: counting });
    await index.build(tools);
    embedded.length = 0;
    await index.upsert([{ id: 'translate', name: 'translateText', description: 'Translate text between languages' }]);
    assert.equal(embedded.length, 1);
    assert.equal((await index.search('translate this text to French', { k: 1 })).results[0]?.id, 'translate');
    index.remove(['translate', 'nope']);
    assert.equal(index.size, tools.length);
    assert.notEqual((await index.search('translate languages', { k: 1 })).results[0]?.id, 'translate');
  });

  it('keeps its vectors quantised and stable: a rebuild after a write ranks with the same rows', async () => {
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build(tools);
    const before = new Map(tools.map((tool) => [tool.id, index.vectorOf(tool.id)!]));
    assert.equal((await index.search('weather forecast', { k: 1 })).results[0]?.id, 'weather');
    for (const tool of tools) assert.deepEqual(index.vectorOf(tool.id), before.get(tool.id));
    // A write rebuilds the matrix from the quantised rows; the values and the ranking stay.
    await index.upsert([{ id: 'translate', name: 'translateText', description: 'Translate text between languages' }]);
    assert.equal((await index.search('translate this text to French', { k: 1 })).results[0]?.id, 'translate');
    index.remove(['translate']);
    assert.equal((await index.search('weather forecast', { k: 1 })).results[0]?.id, 'weather');
    for (const tool of tools) assert.deepEqual(index.vectorOf(tool.id), before.get(tool.id));
  });

  it('reuses given vectors instead of embedding, and rejects duplicate ids', async () => {
    const offline = createOfflineEmbedder();
    let calls = 0;
    const counting: Embedder = { ...offline, modelId: offline.modelId, dimensions: offline.dimensions, maxBatchSize: offline.maxBatchSize, async embed(texts) {
      calls += texts.length;
      return offline.embed(texts);
    } };
    const first = createRetrievalIndex({ embedder: offline });
    await first.build(tools);
    const vectors = new Map(tools.map((tool) => [tool.id, first.vectorOf(tool.id)!]));
    const second = createRetrievalIndex({ embedder: counting });
    await second.build(tools, { vectors });
    assert.equal(calls, 0);
    await assert.rejects(second.build([tools[0]!, tools[0]!]), /duplicate tool id 'weather'/);
  });

  it('breaks ties by id and is deterministic', async () => {
    const twins: RetrievalDocument[] = ['b', 'c', 'a'].map((id) => ({ id, name: 'sameName', description: 'identical description' }));
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build(twins);
    const first = await index.search('identical description');
    assert.deepEqual(first.results.map((r) => r.id), ['a', 'b', 'c']);
    assert.deepEqual(await index.search('identical description'), first);
  });

  it('returns nothing for an empty index or a query without words', async () => {
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build([]);
    assert.deepEqual((await index.search('anything')).results, []);
    await index.build(tools);
    assert.deepEqual((await index.search('   ')).results, []);
  });

  it('answers a repeated or multi-clause query the same way every time (query cache, reused buffers)', async () => {
    const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
    await index.build(tools);
    const query = 'Get the weather forecast for Paris. Then extract the text from this PDF. Finally send an email to Bob.';
    const first = await index.search(query, { k: 6 });
    await index.search('stock price of ACME', { k: 6 });
    const again = await index.search(query, { k: 6 });
    assert.deepEqual(again, first);
    assert.deepEqual(first.results.slice(0, 3).map((r) => r.id).sort(), ['email', 'pdf', 'weather']);
    const masked = await index.search(query, { k: 6, candidateIds: new Set(['pdf', 'stocks']) });
    assert.equal(masked.results[0]?.id, 'pdf');
    assert.ok(masked.results.every((r) => r.id === 'pdf' || r.id === 'stocks'));
  });
});
