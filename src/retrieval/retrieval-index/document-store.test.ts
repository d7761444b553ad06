import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createOfflineEmbedder } from '../embedders/offline.ts';
import type { Embedder } from '../embedders/embedder.ts';
import { createDocumentStore } from './document-store.ts';

const documents = [
  { id: 'a', name: 'sendEmail', description: 'Send an email' },
  { id: 'b', name: 'pdfToText', description: 'Extract text from a PDF' },
];

/** The offline embedder, counting the texts it embeds and failing while `failing` is set. */
function countingEmbedder(): Embedder & { embedded: number; failing: boolean } {
  const offline = createOfflineEmbedder();
  const embedder = {
    ...offline,
    modelId: offline.modelId,
    dimensions: offline.dimensions,
    maxBatchSize: offline.maxBatchSize,
    embedded: 0,
    failing: false,
    async embed(texts: readonly string[]) {
      if (embedder.failing) throw new Error('model exploded');
      embedder.embedded += texts.length;
      return offline.embed([...texts]);
    },
  };
  return embedder;
}

describe('retrieval document store', () => {
  it('refuses a duplicate id before changing anything', async () => {
    const store = createDocumentStore(undefined, 0.25);
    await store.replace(documents, {});
    await assert.rejects(store.replace([documents[0]!, documents[0]!], {}), /duplicate tool id 'a'/);
    assert.deepEqual(store.list().map((d) => d.id), ['a', 'b']);
    assert.equal(store.hasVectors, false);
    assert.equal(store.vectorRows(), undefined);
  });

  it('reuses given vectors of the right size and embeds the rest', async () => {
    const embedder = countingEmbedder();
    const store = createDocumentStore(embedder, 0.25);
    const given = new Float32Array(embedder.dimensions).fill(0.5);
    await store.replace(documents, { vectors: new Map([['a', given], ['b', new Float32Array(3)]]) });
    // Held quantised (int8 and a scale): a constant row comes back within float rounding.
    assert.ok(store.vectorOf('a')!.every((value) => Math.abs(value - 0.5) < 1e-6));
    assert.equal(embedder.embedded, 1, 'only b (wrong size) is embedded');
    assert.equal(store.vectorRows()?.dimensions, embedder.dimensions);
    embedder.embedded = 0;
    await store.upsert([{ id: 'c', name: 'translate', description: 'Translate text' }], {});
    assert.equal(embedder.embedded, 1);
    assert.equal(store.remove(['c', 'unknown']), true);
    assert.equal(store.remove(['unknown']), false);
    assert.equal(store.vectorOf('c'), undefined);
  });

  it('holds one copy of the codes once a snapshot shares its rows', async () => {
    const embedder = countingEmbedder();
    const store = createDocumentStore(embedder, 0.25);
    await store.replace(documents, {});
    const before = documents.map((d) => store.vectorOf(d.id)!);
    const { dimensions, vectors } = store.vectorRows()!;
    const codes = new Int8Array(documents.length * dimensions);
    documents.forEach((d, i) => codes.set(vectors.get(d.id)!.codes, i * dimensions));
    store.shareRows(documents, codes, Uint8Array.from([1, 1]), dimensions);
    assert.ok(documents.every((d) => vectors.get(d.id)!.codes.buffer === codes.buffer));
    documents.forEach((d, i) => assert.deepEqual(store.vectorOf(d.id), before[i]));
  });

  it('fails open: an embedder failure drops every vector with a warning until the next replace', async () => {
    const embedder = countingEmbedder();
    const store = createDocumentStore(embedder, 0.25);
    await store.replace(documents, {});
    assert.equal(store.hasVectors, true);
    embedder.failing = true;
    await store.upsert([{ id: 'c', name: 'translate', description: 'Translate text' }], {});
    assert.equal(store.hasVectors, false);
    assert.equal(store.vectorOf('a'), undefined);
    assert.match(store.warnings.join(' '), /embedder .* failed, ranking lexically: model exploded/);
    embedder.failing = false;
    await store.upsert([{ id: 'd', name: 'weather', description: 'Weather forecast' }], {});
    assert.equal(store.hasVectors, false, 'still lexical until the next replace');
    await store.replace(documents, {});
    assert.equal(store.hasVectors, true);
    assert.deepEqual(store.warnings, []);
  });
});
