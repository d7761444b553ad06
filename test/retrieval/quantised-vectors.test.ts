/**
 * The index's tool vectors held as int8 codes with a scale per row (issue #28,
 * `retrieval-index/quantised-rows.ts`): the round-trip error bound on unit vectors, and the
 * ranking on a real catalog (three MCP servers' tools, test/fixtures/retrieval) with the
 * default embedder (the shipped token table) equal to the float ranking wherever the float
 * scores are clearly apart.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRetrievalIndex } from '../../src/retrieval/retrieval-index.ts';
import { dequantise, quantise, quantisedDot } from '../../src/retrieval/retrieval-index/quantised-rows.ts';
import { createTokenTableEmbedder } from '../../src/retrieval/embedders/token-table.ts';
import { dot, normalizeInPlace } from '../../src/retrieval/embedders/embedder.ts';
import { createSeededRandom } from '../../src/selection/random.ts';
import { embedDocuments } from '../../src/retrieval/tool2vec.ts';
import type { RetrievalDocument } from '../../src/retrieval/document.ts';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/retrieval/real-mcp-tools.json', import.meta.url), 'utf8')) as {
  servers: Record<string, { tools: { name: string; description?: string }[] }>;
  queries: { query: string }[];
};
const documents: RetrievalDocument[] = Object.values(fixture.servers).flatMap(({ tools }) =>
  tools.map((tool) => ({ id: tool.name, name: tool.name, description: tool.description ?? '' })),
);

/** A random unit vector (Gaussian by Box–Muller, seeded). */
function unitVector(random: () => number, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) vector[i] = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return normalizeInPlace(vector);
}

describe('quantised tool vectors', () => {
  it('round-trips unit vectors within half a step per dimension and ~1e-3 in cosine', () => {
    const next = createSeededRandom(7);
    let worst = 0;
    let total = 0;
    const trials = 500;
    for (let t = 0; t < trials; t++) {
      const row = unitVector(next, 512);
      const query = unitVector(next, 512);
      const quantised = quantise(row);
      assert.equal(quantised.codes.length, 512);
      const back = dequantise(quantised);
      for (let i = 0; i < 512; i++) assert.ok(Math.abs(back[i]! - row[i]!) <= quantised.scale / 2 + 1e-7, 'at most half a step per dimension');
      // Quantising the dequantised row gives the same codes and scale (a rebuilt snapshot ranks alike).
      const again = quantise(back);
      assert.deepEqual(again.codes, quantised.codes);
      assert.equal(again.scale, quantised.scale);
      const error = Math.abs(quantisedDot(quantised.codes, 0, quantised.scale, query) - dot(query, row));
      worst = Math.max(worst, error);
      total += error;
    }
    assert.ok(worst < 2e-3, `worst cosine error ${worst}`);
    assert.ok(total / trials < 5e-4, `mean cosine error ${total / trials}`);
    const zero = quantise(new Float32Array(8));
    assert.equal(zero.scale, 0);
    assert.deepEqual(dequantise(zero), new Float32Array(8));
  });

  it('ranks a real catalog as the float vectors do wherever their scores are clearly apart', async () => {
    const embedder = createTokenTableEmbedder();
    const rows = await embedDocuments(embedder, documents, { textShare: 0.25 });
    const quantised = rows.map(quantise);
    const queries = await embedder.embed(fixture.queries.map((q) => q.query));
    let compared = 0;
    for (const query of queries) {
      const exact = rows.map((row, d) => ({ d, score: dot(query, row) })).sort((a, b) => b.score - a.score);
      const approximate = quantised.map((row, d) => ({ d, score: quantisedDot(row.codes, 0, row.scale, query) })).sort((a, b) => b.score - a.score);
      // Compare the top 5 up to the first near-tie (gap ≤ 4e-3, twice the worst error both ways).
      let k = 0;
      while (k < 5 && exact[k]!.score - exact[k + 1]!.score > 4e-3) k++;
      assert.deepEqual(approximate.slice(0, k).map((r) => r.d), exact.slice(0, k).map((r) => r.d));
      for (let d = 0; d < rows.length; d++) assert.ok(Math.abs(quantisedDot(quantised[d]!.codes, 0, quantised[d]!.scale, query) - dot(query, rows[d]!)) < 2e-3);
      compared += k;
    }
    assert.ok(compared >= 20, `enough clearly separated ranks compared (${compared})`);
    await embedder.close?.();
  });

  it('holds the quantised vector: what the index ranks with is the dequantised embedding', async () => {
    const embedder = createTokenTableEmbedder();
    const rows = await embedDocuments(embedder, documents, { textShare: 0.25 });
    const index = createRetrievalIndex({ embedder });
    await index.build(documents);
    documents.forEach((document, d) => assert.deepEqual(index.vectorOf(document.id), dequantise(quantise(rows[d]!))));
    await index.search('read a file', { k: 3 });
    documents.forEach((document, d) => assert.deepEqual(index.vectorOf(document.id), dequantise(quantise(rows[d]!))));
  });
});
