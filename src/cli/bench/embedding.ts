/**
 * @module cli/bench/embedding
 * Query embedding cost side by side (issue #25): the hashed offline embedder, the token table
 * distilled from the shipped model (both in process) and the model itself (USE-Lite, through
 * its worker thread), each on the same 100 distinct Seal-Tools requests, uncached, after its
 * load. Target: p50 ≤ 5 ms with a model on (DESIGN §6).
 */
import { performance } from 'node:perf_hooks';
import type { Embedder } from '../../retrieval/embedders/embedder.ts';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { createTokenTableEmbedder } from '../../retrieval/embedders/token-table.ts';
import { createUseLiteEmbedder } from '../../retrieval/embedders/use-lite.ts';
import { percentile } from '../../core/stats.ts';
import { loadSeal } from './selection.ts';

const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

async function measure(embedder: Embedder, ready: () => Promise<void>, queries: readonly string[]) {
  const loadStarted = performance.now();
  await ready();
  const loadMs = performance.now() - loadStarted;
  // A few untimed texts first: the JIT, not the embedder, would otherwise set the tail.
  for (const query of queries.slice(0, 10)) await embedder.embed([`${query} (warm-up)`]);
  const times: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    await embedder.embed([query]);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { model: embedder.modelId, loadMs: Math.round(loadMs), queries: times.length, p50Ms: round(percentile(times, 0.5) ?? 0), p99Ms: round(percentile(times, 0.99) ?? 0) };
}

/** Query embedding p50 / p99 for the offline embedder, the token table and the model. */
export async function benchEmbedding(options: { queries?: number; dataDir?: URL } = {}) {
  const { queries: all } = loadSeal(options.dataDir);
  const queries = [...new Set(all)].slice(0, options.queries ?? 100);
  const offline = createOfflineEmbedder();
  const table = createTokenTableEmbedder();
  const model = createUseLiteEmbedder();
  try {
    return {
      offline: await measure(offline, async () => {}, queries),
      table: await measure(table, async () => table.load(), queries),
      model: await measure(model, () => model.ready(), queries),
    };
  } finally {
    await model.close?.();
  }
}
