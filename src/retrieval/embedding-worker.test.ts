/**
 * Embeddings kept current by themselves (issue #15): the background worker embeds what a
 * catalog write left pending, one run per burst, re-embeds after a model switch, reports a
 * failing embedder without throwing, and does nothing on its own in the manual mode.
 */
import { it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import type { Database } from '../store/database.ts';
import { getEmbeddings } from '../store/repositories/embeddings.ts';
import { createCatalogService, type CatalogService } from '../catalog/index.ts';
import { createOfflineEmbedder } from './embedders/offline.ts';
import type { Embedder } from './embedders/embedder.ts';
import { createEmbeddingWorker, type EmbeddingWorker } from './embedding-worker.ts';

/** The offline embedder under another model id (a stand-in for switching embedders). */
function renamed(embedder: Embedder, modelId: string): Embedder {
  return { ...embedder, modelId, embed: (texts, options) => embedder.embed(texts, options) };
}

function failing(embedder: Embedder): Embedder {
  return { ...embedder, modelId: 'broken-model', embed: async () => Promise.reject(new Error('model server is down')) };
}

async function statuses(db: Database): Promise<Record<string, string>> {
  const { rows } = await db.query<{ name: string; embedding_status: string }>('SELECT name, embedding_status FROM tools WHERE deleted_at IS NULL');
  return Object.fromEntries(rows.map((row) => [row.name, row.embedding_status]));
}

describeEachBackend('background embedding worker', (backend) => {
  let db: Database;
  let catalog: CatalogService;
  let worker: EmbeddingWorker | undefined;
  const embedder = createOfflineEmbedder();
  let plugin = 0;

  before(async () => {
    db = await backend.open();
    catalog = createCatalogService({ db, onChange: (event) => (event.kind === 'tools' ? worker?.schedule() : undefined) });
  });
  beforeEach(async () => {
    await worker?.close();
    worker = undefined;
  });
  after(async () => {
    await worker?.close();
    await db.close();
  });

  const syncTools = (names: string[]) =>
    catalog.syncPlugin({ pluginId: `plugin-${++plugin}`, version: '1.0.0', tools: names.map((name) => ({ name, description: `Tool ${name.replace(/_/g, ' ')}` })) });

  it('embeds new tools after catalog writes, one run for a burst of requests', async () => {
    let runs = 0;
    worker = createEmbeddingWorker({ db, embedder, debounceMs: 50, sweepIntervalMs: 0, onEmbedded: () => runs++ });
    await worker.idle();
    runs = 0;
    await syncTools(['fetch_weather', 'convert_units']);
    await syncTools(['translate_text']);
    await worker.idle();
    runs = 0;
    await syncTools(['burst_one', 'burst_two']);
    // Requests arriving before the debounce fires cost the same single run.
    for (let i = 0; i < 5; i++) worker.schedule();
    await worker.idle();
    const states = await statuses(db);
    for (const name of ['fetch_weather', 'convert_units', 'translate_text', 'burst_one', 'burst_two']) assert.equal(states[name], 'current', name);
    assert.equal(runs, 1, 'a burst of schedule requests costs one run');
    const status = await worker.status();
    assert.equal(status.lastRun?.embedded, 2);
    assert.equal(status.tools.pending ?? 0, 0);
    assert.equal(status.running, false);
    assert.equal((await getEmbeddings(db, embedder.modelId)).size, Object.keys(states).length);
  });

  it('does nothing by itself in the manual mode; runNow embeds', async () => {
    worker = createEmbeddingWorker({ db, embedder, background: false, debounceMs: 10, sweepIntervalMs: 0 });
    await syncTools(['manual_only_tool']);
    worker.schedule();
    await worker.idle();
    assert.equal((await statuses(db)).manual_only_tool, 'pending');
    assert.equal((await worker.status()).lastRun, null);
    const report = await worker.runNow();
    assert.equal(report.embedded, 1);
    assert.equal((await statuses(db)).manual_only_tool, 'current');
  });

  it('re-embeds every tool for a new model at start', async () => {
    const other = renamed(embedder, 'offline-renamed');
    worker = createEmbeddingWorker({ db, embedder: other, debounceMs: 10, sweepIntervalMs: 0 });
    await worker.idle();
    const total = Object.keys(await statuses(db)).length;
    assert.equal((await getEmbeddings(db, other.modelId)).size, total);
    assert.ok(Object.values(await statuses(db)).every((state) => state === 'current'));
    assert.equal((await worker.runNow({ all: true })).embedded, total, '--all re-embeds everything');
  });

  it('reports a failing embedder and leaves the tools for the next run', async () => {
    worker = createEmbeddingWorker({ db, embedder: failing(embedder), debounceMs: 10, sweepIntervalMs: 0 });
    await worker.idle();
    const report = (await worker.status()).lastRun!;
    assert.equal(report.embedded, 0);
    assert.match(report.warnings.join('\n'), /model server is down/);
    assert.ok((await worker.status()).tools.stale! > 0, 'tools of the old model were marked stale, not lost');
  });
});
