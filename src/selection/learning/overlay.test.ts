import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { terms } from '../../retrieval/tokenizer.ts';
import { buildOverlay, contentTerms, PREFILTER_ABOVE, type OverlayExample } from './overlay.ts';

// Agreement and the lexical field off: the vector boost alone, as issue #13 built it.
const scoring = { minSimilarity: 0.35, weight: 2, contributorShare: 0.34, lexicalWeight: 0, agreementShare: 1, agreementFloor: 0.2 };
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

  it('hands the learned requests to the index as the tools\' example field, one contributor\'s flood at most its share (issue #25)', async () => {
    const withField = { ...scoring, weight: 0, lexicalWeight: 1, agreementShare: 0.5 };
    const overlay = buildOverlay(
      await examples([
        { toolId: 'plants', text: 'how often should I water my fiddle leaf fig', contributor: 'a' },
        { toolId: 'plants', text: 'my fiddle leaf fig has brown spots', contributor: 'b' },
        { toolId: 'plants', text: 'repotting a fiddle leaf fig in spring', contributor: 'c' },
        { toolId: 'weather', text: 'fig weather fig weather', contributor: 'flooder' },
        { toolId: 'weather', text: 'fig weather', contributor: 'flooder' },
      ]).then((rows) => rows.map((row, i) => ({ ...row, fieldTerms: terms(['how often should I water my fiddle leaf fig', 'my fiddle leaf fig has brown spots', 'repotting a fiddle leaf fig in spring', 'fig weather fig weather', 'fig weather'][i]!) }))),
      embedder.dimensions,
      withField,
    );
    const plants = overlay.field!.tools.get('plants')!;
    assert.equal(plants.frequency.get(terms('fig')[0]!), 3, 'three contributors: each request counts once');
    assert.equal(plants.length, terms('how often should I water my fiddle leaf fig my fiddle leaf fig has brown spots repotting a fiddle leaf fig in spring').length);
    const weather = overlay.field!.tools.get('weather')!;
    assert.ok(Math.abs(weather.frequency.get(terms('fig')[0]!)! - 3 * 0.34) < 1e-9, 'one contributor: its occurrences × the share');
    assert.equal(buildOverlay(await examples([{ toolId: 'plants', text: 'fig', contributor: 'a' }]), embedder.dimensions, { ...withField, lexicalWeight: 0 }).field, undefined, 'lexicalWeight 0: no field');
    assert.equal(overlay.boosts(await query('fiddle leaf fig care')).size, 0, 'the field is not a boost: the index scores it');
  });

  it('noisy feedback does not let a wrong tool overtake: examples other contributors contradict fade (issue #25)', async () => {
    const noisy = { ...scoring, lexicalWeight: 1, agreementShare: 0.5 };
    const rows = [
      { toolId: 'convert', text: 'how many yen will my dollars buy', contributor: 'a' },
      { toolId: 'convert', text: 'how many yen do I get for 100 dollars', contributor: 'b' },
      { toolId: 'convert', text: 'dollars to yen exchange today', contributor: 'c' },
      // A model credited the wrong tool once for the same kind of request.
      { toolId: 'email', text: 'how many yen would my dollars buy', contributor: 'd' },
    ];
    const request = await query('how many yen can I buy with my dollars');
    const overlay = buildOverlay(await examples(rows), embedder.dimensions, noisy);
    const boosts = overlay.boosts(request);
    assert.ok(boosts.get('convert')! > 3 * (boosts.get('email') ?? 0), `convert ${boosts.get('convert')} vs email ${boosts.get('email')}`);
    // Without the agreement rule the wrongly credited example, a near repeat, weighs like the rest.
    const naive = buildOverlay(await examples(rows), embedder.dimensions, { ...noisy, agreementShare: 1 }).boosts(request);
    assert.ok((boosts.get('email') ?? 0) < naive.get('email')! / 3, `email ${boosts.get('email')} vs ${naive.get('email')} without agreement`);
    // A second noisy contributor for the same request still cannot outweigh the three agreeing ones.
    const flooded = buildOverlay(
      await examples([...rows, { toolId: 'email', text: 'how many yen will my dollars buy', contributor: 'e' }]),
      embedder.dimensions,
      noisy,
    ).boosts(request);
    assert.ok(flooded.get('convert')! > flooded.get('email')!, `convert ${flooded.get('convert')} vs email ${flooded.get('email')}`);
  });
});
