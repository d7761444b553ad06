/**
 * 512-dimensional vectors (the shipped model's, issue #25) are stored, read back and searched by
 * cosine distance through their HNSW index on PGlite and PostgreSQL (one test body).
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { recomputeStale, loadVectors } from '../../src/retrieval/embedding-sync.ts';
import { vectorLiteral } from '../../src/store/repositories/embeddings.ts';
import { normalizeInPlace, type Embedder } from '../../src/retrieval/embedders/embedder.ts';
import { createOfflineEmbedder } from '../../src/retrieval/embedders/offline.ts';

// A 512-d stand-in with the model's shape (the real model is covered by shipped-model.test.ts):
// the offline embedder's features spread over 512 dimensions.
const inner = createOfflineEmbedder({ dimensions: 512 });
const embedder: Embedder = { ...inner, provider: 'test-512', modelId: 'test-512', embed: (texts) => inner.embed(texts).then((v) => v.map(normalizeInPlace)) };

describeEachBackend('512-dimensional tool vectors', (backend) => {
  let db: Database;
  before(async () => {
    db = await backend.open();
  });
  after(async () => {
    await db.close();
  });

  it('stores, loads and searches 512-d vectors through the 512-d HNSW index', async () => {
    const ids: Record<string, string> = {};
    for (const [name, description] of [['getWeather', 'Weather forecast for a city'], ['sendEmail', 'Send an email message to a recipient'], ['pdfToText', 'Extract text from PDF files']]) {
      const id = (ids[name!] = randomUUID());
      await db.query(`INSERT INTO tools (id, name, description, content_hash, embedding_status) VALUES ($1, $2, $3, $4, 'pending')`, [id, name, description, name!.padEnd(64, '0').slice(0, 64)]);
    }
    const result = await recomputeStale(db, embedder);
    assert.equal(result.embedded.length, 3);
    const vectors = await loadVectors(db, embedder);
    assert.equal(vectors.get(ids.sendEmail!)!.length, 512);
    const indexes = await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = 'tool_embeddings' AND indexname = 'tool_embeddings_512_hnsw'`);
    assert.equal(indexes.rows.length, 1);
    const [query] = await embedder.embed(['send an email']);
    const nearest = await db.query<{ tool_id: string }>(
      `SELECT tool_id FROM tool_embeddings WHERE dimensions = 512 AND model = $2 ORDER BY embedding::vector(512) <=> $1::vector(512) LIMIT 1`,
      [vectorLiteral(query!), embedder.modelId],
    );
    assert.equal(nearest.rows[0]?.tool_id, ids.sendEmail);
  });
});
