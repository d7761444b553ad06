import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { decodeVectorBase64, getEmbeddings, upsertEmbeddings, vectorLiteral } from '../store/repositories/embeddings.ts';
import { embeddingDrift, loadVectors, recomputeStale } from './embedding-sync.ts';
import { createOfflineEmbedder } from './embedders/offline.ts';
import type { Embedder } from './embedders/embedder.ts';
import { createRetrievalIndex } from './retrieval-index.ts';
import { dequantise, quantise } from './retrieval-index/quantised-rows.ts';

async function insertTool(db: Database, name: string, description: string, examples: string[] = [], status = 'pending'): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO tools (id, name, description, example_queries, content_hash, embedding_status)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6)`,
    [id, name, description, JSON.stringify(examples), name.padEnd(64, '0').slice(0, 64), status],
  );
  return id;
}

describeEachBackend('tool embeddings in pgvector', (backend) => {
  let db: Database;
  const embedder = createOfflineEmbedder();
  before(async () => {
    db = await backend.open();
  });
  after(async () => {
    await db.close();
  });

  it('reads stored vectors back exactly, in the binary form', async () => {
    const id = await insertTool(db, 'exactVector', 'A vector with awkward values', [], 'current');
    const vector = Float32Array.from([0.1, -3.4e38, 1e-7, 123.456, 0, -1, 2 ** -20, 0.3333333]);
    await upsertEmbeddings(db, [{ toolId: id, model: 'exact-test', embedding: vector, contentHash: 'h'.repeat(64) }]);
    const stored = await getEmbeddings(db, 'exact-test', [id]);
    assert.deepEqual(stored.get(id)!.embedding, vector);
    assert.equal(stored.get(id)!.dimensions, 8);
    assert.throws(() => decodeVectorBase64(Buffer.from([0, 2, 0, 0, 1]).toString('base64')), /unexpected binary vector/);
    assert.throws(() => decodeVectorBase64(42), /unexpected vector/);
  });

  it('embeds only pending and stale tools, marks them current, and feeds the index', async () => {
    const weather = await insertTool(db, 'getWeather', 'Weather forecast for a city');
    const pdf = await insertTool(db, 'pdfToText', 'Extract text from PDF files', ['turn this pdf into text'], 'stale');
    const current = await insertTool(db, 'already', 'Already embedded', [], 'current');
    const first = await recomputeStale(db, embedder, { batchSize: 1 });
    assert.deepEqual([...first.embedded].sort(), [weather, pdf].sort());
    assert.deepEqual(first.warnings, []);
    const stored = await getEmbeddings(db, embedder.modelId);
    assert.deepEqual([...stored.keys()].sort(), [weather, pdf].sort());
    assert.equal(stored.get(weather)!.dimensions, 384);
    assert.ok(!stored.has(current));
    const { rows } = await db.query<{ id: string; embedding_status: string; last_embedded_at: unknown }>(
      'SELECT id, embedding_status, last_embedded_at FROM tools WHERE id = ANY($1::uuid[])',
      [[weather, pdf]],
    );
    assert.ok(rows.every((row) => row.embedding_status === 'current' && row.last_embedded_at !== null));
    // A second run has nothing to do.
    assert.deepEqual((await recomputeStale(db, embedder)).embedded, []);

    // The stored vector is what the index would compute itself (the index holds it quantised,
    // issue #28), and cosine search works in SQL.
    const vectors = await loadVectors(db, embedder);
    const index = createRetrievalIndex({ embedder });
    await index.build([{ id: pdf, name: 'pdfToText', description: 'Extract text from PDF files', exampleQueries: ['turn this pdf into text'] }]);
    const own = index.vectorOf(pdf)!;
    assert.deepEqual(own, dequantise(quantise(vectors.get(pdf)!)));
    const [query] = await embedder.embed(['weather forecast']);
    const nearest = await db.query<{ tool_id: string }>(
      `SELECT tool_id FROM tool_embeddings WHERE dimensions = 384 AND model = $2
       ORDER BY embedding::vector(384) <=> $1::vector(384) LIMIT 1`,
      [vectorLiteral(query!), embedder.modelId],
    );
    assert.equal(nearest.rows[0]?.tool_id, weather);
  });

  it('lists each pending tool once per run, paging past tools that share one timestamp', async () => {
    // Ten tools written in one transaction share updated_at (to the microsecond).
    const ids = await db.transaction(async (tx) => {
      const written: string[] = [];
      for (let i = 0; i < 10; i++) written.push(await insertTool(tx as Database, `paged${i}`, `Paged tool number ${i}`));
      return written;
    });
    const mine = new Set(ids);
    let listed = 0;
    const counting = new Proxy(db, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'query') return typeof value === 'function' ? value.bind(target) : value;
        return async (sql: string, params?: unknown[]) => {
          const result = await target.query<{ id?: string }>(sql, params);
          if (sql.includes("embedding_status IN ('pending', 'stale')")) listed += result.rows.filter((row) => row.id !== undefined && mine.has(row.id)).length;
          return result;
        };
      },
    });
    const result = await recomputeStale(counting, embedder, { batchSize: 3 });
    for (const id of ids) assert.ok(result.embedded.includes(id), 'every tool of the page set is embedded');
    // Read once each (a listing that re-read what it had tried read 14 rows for these 10).
    assert.equal(listed, 10);
  });

  it('leaves statuses alone and warns when the embedder fails', async () => {
    const id = await insertTool(db, 'failing', 'Will not embed');
    const broken: Embedder = { ...embedder, modelId: embedder.modelId, dimensions: 384, maxBatchSize: 8, async embed() {
      throw new Error('service down');
    } };
    const result = await recomputeStale(db, broken);
    assert.deepEqual(result.embedded, []);
    assert.match(result.warnings[0]!, /service down/);
    const { rows } = await db.query<{ embedding_status: string }>('SELECT embedding_status FROM tools WHERE id = $1', [id]);
    assert.equal(rows[0]?.embedding_status, 'pending');
  });

  it('keeps a tool stale when its content changed while it was being embedded', async () => {
    const id = await insertTool(db, 'racy', 'Original text');
    const racing: Embedder = { ...embedder, modelId: embedder.modelId, dimensions: 384, maxBatchSize: 64, async embed(texts) {
      await db.query("UPDATE tools SET content_hash = repeat('f', 64), embedding_status = 'stale' WHERE id = $1", [id]);
      return embedder.embed(texts);
    } };
    const result = await recomputeStale(db, racing);
    assert.ok(result.changedMeanwhile.includes(id));
    const { rows } = await db.query<{ embedding_status: string }>('SELECT embedding_status FROM tools WHERE id = $1', [id]);
    assert.equal(rows[0]?.embedding_status, 'stale');
  });

  it('lists drift: not current, never embedded, or older than the threshold', async () => {
    const old = await insertTool(db, 'oldTool', 'x', [], 'current');
    await db.query("UPDATE tools SET last_embedded_at = now() - interval '10 days' WHERE id = $1", [old]);
    const fresh = await insertTool(db, 'freshTool', 'x', [], 'current');
    await db.query('UPDATE tools SET last_embedded_at = now() WHERE id = $1', [fresh]);
    const drift = await embeddingDrift(db);
    const ids = drift.map((row) => row.id);
    assert.ok(ids.includes(old));
    assert.ok(!ids.includes(fresh));
    const oldRow = drift.find((row) => row.id === old)!;
    assert.ok(oldRow.daysSinceEmbed > 9.9 && oldRow.daysSinceEmbed < 10.1);
    assert.ok((await embeddingDrift(db, { maxAgeDays: 30 })).every((row) => row.id !== old));
    // Never embedded ('pending', no timestamp) comes first: the most out of date.
    assert.equal(drift[0]?.lastEmbeddedAt, null);
  });
});
