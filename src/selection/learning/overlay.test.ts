import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { buildOverlay, contentTerms, PREFILTER_ABOVE, type OverlayExample } from './overlay.ts';

const scoring = { minSimilarity: 0.35, weight: 2, contributorShare: 0.34 };
const embedder = createOfflineEmbedder();

async function examples(rows: Array<{ toolId: string; text: string; contributor: string }>): Promise<OverlayExample[]> {
  const vectors = await embedder.embed(rows.map((row) => row.text));
  return rows.map((row, i) => ({ id: `e${i}`, toolId: row.toolId, contributor: row.contributor, vector: vectors[i]!, terms: contentTerms(row.text) }));
}
const query = async (text: string) => ({ vector: (await embedder.embed([text]))[0]!, terms: contentTerms(text) });

describe('learned example overlay (issue #13)', () => {
  it('boosts by similarity above the floor, scaled by distinct contributors, within candidates', async () => {
    const overlay = buildOverlay(
      await examples([
        { toolId: 'convert', text: 'how many yen will my dollars buy', contributor: 'a' },
        { toolId: 'convert', text: 'how many yen will my dollars buy', contributor: 'b' },
        { toolId: 'convert', text: 'how many yen will my dollars buy', contributor: 'c' },
        { toolId: 'email', text: 'how many yen will my dollars buy', contributor: 'flooder' },
        { toolId: 'weather', text: 'forecast for Oslo tomorrow', contributor: 'a' },
      ]),
      embedder.dimensions,
      scoring,
    );
    const boosts = overlay.boosts(await query('how many yen will my dollars buy'));
    assert.ok(Math.abs(boosts.get('convert')! - 2) < 1e-4, String(boosts.get('convert')));
    assert.ok(Math.abs(boosts.get('email')! - 0.68) < 1e-4, 'one contributor gives at most share × weight');
    assert.equal(boosts.has('weather'), false, 'below the similarity floor: no boost');
    assert.deepEqual([...overlay.boosts(await query('how many yen will my dollars buy'), new Set(['email'])).keys()], ['email']);
  });

  it(`above ${PREFILTER_ABOVE} examples, scores only tools sharing a content word with the request`, async () => {
    const request = await query('how many yen will my dollars buy');
    // Filler tools whose vectors equal the request's but whose words differ: only the word
    // index can keep them out (below the threshold they would be boosted like a repeat).
    const filler = (count: number): OverlayExample[] =>
      Array.from({ length: count }, (_, i) => ({ id: `f${i}`, toolId: `filler${i % 50}`, contributor: `u${i % 3}`, vector: request.vector, terms: ['archiv', 'invoic'] }));
    const small = buildOverlay([...filler(10), ...(await examples([{ toolId: 'convert', text: 'how many yen will my dollars buy', contributor: 'a' }]))], embedder.dimensions, scoring);
    assert.equal(small.boosts(request).size, 11, 'a small scope scores every tool');
    const large = buildOverlay([...filler(PREFILTER_ABOVE + 1), ...(await examples([{ toolId: 'convert', text: 'how many yen will my dollars buy', contributor: 'a' }]))], embedder.dimensions, scoring);
    assert.deepEqual([...large.boosts(request).keys()], ['convert']);
    assert.equal(large.boosts({ vector: request.vector, terms: [] }).size, 0);
  });
});
