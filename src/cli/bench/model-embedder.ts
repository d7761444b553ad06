/**
 * @module cli/bench/model-embedder
 * The cost of a shipped embedder (issue #25), measured on this machine: the model (USE-Lite in
 * its worker thread) or the token table distilled from it (in process). Query
 * embedding (uncached, round trip included) and a repeated query (the
 * index's query-vector cache), the time to embed 1,000 tools in the background, end-to-end
 * selection latency at 1,000 tools with the model (every query new, so every one is embedded),
 * the same while the 1,000 tools are re-embedded in the background, and the process RSS.
 */
import { performance } from 'node:perf_hooks';
import { createUseLiteEmbedder } from '../../retrieval/embedders/use-lite.ts';
import { createTokenTableEmbedder } from '../../retrieval/embedders/token-table.ts';
import { recomputeStale } from '../../retrieval/embedding-sync.ts';
import { markStaleForModel } from '../../store/repositories/embeddings.ts';
import { createPersistentRetrieval } from '../../selection/persistent-retrieval.ts';
import { createSelectionEngine } from '../../selection/engine.ts';
import { createSeededRandom } from '../../selection/random.ts';
import { percentile } from '../../core/stats.ts';
import { loadSeal, seededStore } from './selection.ts';

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50Ms: round(percentile(sorted, 0.5) ?? 0), p99Ms: round(percentile(sorted, 0.99) ?? 0) };
};

/** The embedder to measure and how to wait for its load. */
function shippedEmbedder(kind: 'model' | 'table') {
  if (kind === 'table') {
    const embedder = createTokenTableEmbedder();
    return { embedder, ready: async () => embedder.load() };
  }
  const embedder = createUseLiteEmbedder();
  return { embedder, ready: () => embedder.ready() };
}

/** Measures a shipped embedder's costs at `tools` tools (default 1,000): the model, or its distilled table. */
export async function benchModelEmbedder(options: { tools?: number; queries?: number; dataDir?: URL; kind?: 'model' | 'table' } = {}) {
  const toolCount = options.tools ?? 1_000;
  const { tools, queries: allQueries } = loadSeal(options.dataDir);
  const queries = [...new Set(allQueries)].slice(0, options.queries ?? 300);
  const { embedder, ready } = shippedEmbedder(options.kind ?? 'model');
  const rssBefore = process.memoryUsage().rss;
  const loadStarted = performance.now();
  await ready();
  const loadMs = performance.now() - loadStarted;
  const db = await seededStore(tools, toolCount);
  try {
    // Query embedding alone: distinct texts (no cache anywhere).
    const queryTimes: number[] = [];
    for (const query of queries.slice(0, 100)) {
      const t0 = performance.now();
      await embedder.embed([`${query} (bench)`]);
      queryTimes.push(performance.now() - t0);
    }
    const embedStarted = performance.now();
    const first = await recomputeStale(db, embedder);
    const embedToolsMs = performance.now() - embedStarted;

    const engine = createSelectionEngine({ db, random: createSeededRandom(1), listen: false, retrieval: () => createPersistentRetrieval({ db, embedder }) });
    try {
      await engine.selectTools({ query: 'warm up the index', k: 7, log: false });
      const select = async (query: string) => {
        const t0 = performance.now();
        await engine.selectTools({ query, k: 7, log: false });
        return performance.now() - t0;
      };
      const fresh: number[] = [];
      for (const query of queries.slice(0, 150)) fresh.push(await select(query));
      const repeated: number[] = [];
      for (const query of queries.slice(0, 150)) repeated.push(await select(query));
      // Re-embed every tool in the background (the worker's catalog queue) while searching with new queries.
      await markStaleForModel(db, embedder.modelId, { all: true });
      let backgroundDone = false;
      const background = recomputeStale(db, embedder).finally(() => (backgroundDone = true));
      const during: number[] = [];
      for (const query of queries.slice(150)) {
        if (backgroundDone) break;
        during.push(await select(`${query} again`));
      }
      await background;
      return {
        model: embedder.modelId,
        tools: toolCount,
        loadMs: Math.round(loadMs),
        queryEmbedding: summary(queryTimes),
        embedToolsInBackground: { tools: first.embedded.length, ms: Math.round(embedToolsMs), perToolMs: round(embedToolsMs / Math.max(1, first.embedded.length)) },
        selectionNewQueries: summary(fresh),
        selectionRepeatedQueries: summary(repeated),
        selectionWhileEmbedding1kTools: summary(during),
        rssMb: Math.round(process.memoryUsage().rss / 1e6),
        rssAddedMb: Math.round((process.memoryUsage().rss - rssBefore) / 1e6),
      };
    } finally {
      await engine.close();
    }
  } finally {
    await embedder.close?.();
    await db.close();
  }
}
