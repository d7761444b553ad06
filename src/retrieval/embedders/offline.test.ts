import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createOfflineEmbedder } from './offline.ts';
import { dot } from './embedder.ts';

describe('offline embedder', () => {
  const embedder = createOfflineEmbedder();

  it('is a v1 embedder of 384 dimensions with a settings-bearing model id', () => {
    assert.equal(embedder.specificationVersion, 'v1');
    assert.equal(embedder.dimensions, 384);
    assert.match(embedder.modelId, /^quiver-offline-v2-d384/);
    assert.notEqual(createOfflineEmbedder({ dimensions: 256 }).modelId, embedder.modelId);
  });

  it('is deterministic and L2-normalised', async () => {
    const [a, b] = await embedder.embed(['Convert a PDF file to plain text', 'Convert a PDF file to plain text']);
    const [c] = await createOfflineEmbedder().embed(['Convert a PDF file to plain text']);
    assert.deepEqual(a, b);
    assert.deepEqual(a, c);
    assert.ok(Math.abs(dot(a!, a!) - 1) < 1e-5);
    const [empty] = await embedder.embed(['']);
    assert.equal(dot(empty!, empty!), 0);
  });

  it('puts a paraphrase closer than an unrelated text', async () => {
    const [query, paraphrase, unrelated] = await embedder.embed([
      'what is the weather forecast for tomorrow in Paris',
      'getWeatherForecast: weather forecasts for a city',
      'transfer money between two bank accounts',
    ]);
    assert.ok(dot(query!, paraphrase!) > dot(query!, unrelated!) + 0.1);
  });

  it('relates morphological variants through character n-grams', async () => {
    const [a, b, c] = await embedder.embed(['cryptocurrency prices', 'crypto price', 'garden tomatoes']);
    assert.ok(dot(a!, b!) > dot(a!, c!));
  });
});
