/**
 * Searches never wait for catalog embedding with a model (issue #25): the app's retrieval builds
 * from stored vectors only and ranks the tools without one lexically until the background worker
 * has embedded them; the cheap offline embedder still embeds inline as before.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPersistentRetrieval } from '../../src/selection/persistent-retrieval.ts';
import { createOfflineEmbedder } from '../../src/retrieval/embedders/offline.ts';
import type { Embedder } from '../../src/retrieval/embedders/embedder.ts';
import type { Database } from '../../src/store/database.ts';

const documents = [
  { id: 'a', name: 'getWeather', description: 'Weather forecast for a city' },
  { id: 'b', name: 'sendEmail', description: 'Send an email message to a recipient' },
];
// No stored vectors: every read fails, as if the worker had not run yet (the retrieval falls back to embedding or not).
const noStore = { query: async () => ({ rows: [] }) } as unknown as Database;

function counting(provider: string): Embedder & { texts: number } {
  const inner = createOfflineEmbedder();
  const counted = {
    ...inner,
    provider,
    texts: 0,
    async embed(texts: readonly string[]) {
      counted.texts += texts.length;
      return inner.embed(texts);
    },
  };
  return counted;
}

describe('catalog embedding stays off the search path with a model', () => {
  it('a model-backed retrieval never embeds the catalog on build and search', async () => {
    const model = counting('use-lite');
    const retrieval = createPersistentRetrieval({ db: noStore, embedder: model });
    await retrieval.build(documents);
    assert.equal(model.texts, 0, 'the build embedded no tool');
    const found = await retrieval.search('send an email', { k: 2 });
    assert.equal(found.results[0]?.id, 'b', 'tools without vectors still rank lexically');
    assert.ok(model.texts <= 1, 'at most the query was embedded');
  });

  it('the offline embedder still embeds missing tools inline (cheap)', async () => {
    const offline = counting('quiver-offline');
    const retrieval = createPersistentRetrieval({ db: noStore, embedder: offline });
    await retrieval.build(documents);
    assert.equal(offline.texts, 2);
  });
});
