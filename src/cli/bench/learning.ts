/**
 * @module cli/bench/learning
 * `quiver bench` section `learning` (issue #13): what learned example queries cost and how
 * fast they act, on Seal-Tools (4,076 tools, dev queries) in an in-memory store with the
 * offline embedder and the production retrieval (hybrid, persistent):
 * - search latency p50 / p99 of the same stream of logged selections with outcomes, through
 *   an engine without learning and one whose learning captures every successful outcome
 *   while the searches run (alternating blocks, so both see the same machine state);
 * - the backlog left when the stream ends (drain time) and the capture cost per example;
 * - the time from an outcome report to the taught tool ranking first (three users teach a
 *   dev query whose gold tool was not first; includes the engine's 50 ms outcome batching).
 */
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { openStore } from '../../store/open.ts';
import { createCatalogService } from '../../catalog/index.ts';
import { createOfflineEmbedder } from '../../retrieval/embedders/offline.ts';
import { createPersistentRetrieval } from '../../selection/persistent-retrieval.ts';
import { createSelectionEngine, type SelectionEngine } from '../../selection/engine.ts';
import { createSeededRandom } from '../../selection/random.ts';
import { createLearning, withLearnedExamples, type Learning } from '../../selection/learning/index.ts';
import type { Database } from '../../store/database.ts';
import { percentile } from '../../core/stats.ts';
import { benchDataFile } from './bench-data.ts';

interface DevQuery {
  query: string;
  gold: string[];
}

const round = (value: number) => Math.round(value * 1000) / 1000;
const ms = (sorted: number[], fraction: number) => round(percentile(sorted, fraction) ?? 0);

function readJsonl<T>(url: URL): T[] {
  return readFileSync(url, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

function engineOver(db: Database, learning?: Learning): SelectionEngine {
  const embedder = createOfflineEmbedder();
  const base = () => createPersistentRetrieval({ db, embedder });
  return createSelectionEngine({
    db,
    listen: false,
    random: createSeededRandom(3),
    retrieval: learning ? () => withLearnedExamples(base(), learning) : base,
    ...(learning ? { outcomeObserver: learning } : {}),
  });
}

/** One selection for `user` and its outcome (the gold tool called when it was offered); returns the latency. */
async function selectAndReport(engine: SelectionEngine, query: DevQuery, user: string, orgId: string): Promise<number> {
  const t0 = performance.now();
  const result = await engine.selectTools({ query: query.query, k: 10, context: { orgId, userId: user, sessionId: user } });
  const elapsed = performance.now() - t0;
  const called = result.tools.filter((tool) => query.gold.includes(tool.name)).map((tool) => tool.qualifiedName);
  engine.queueOutcome(result.metadata.eventId!, { toolsCalled: called, success: called.length > 0 });
  return elapsed;
}

/** Latency with and without learning over the same stream; then the learning backlog. */
async function latencyCost(db: Database, learning: Learning, queries: readonly DevQuery[], rounds: number) {
  const plain = engineOver(db);
  const learned = engineOver(db, learning);
  const times = { plain: [] as number[], learning: [] as number[] };
  try {
    for (const engine of [plain, learned]) for (const query of queries.slice(0, 50)) await engine.selectTools({ query: query.query, k: 10, log: false, context: { orgId: 'bench' } });
    const block = 50;
    for (let start = 0; start < rounds; start += block) {
      for (const [name, engine] of [['plain', plain], ['learning', learned]] as const) {
        for (let i = start; i < Math.min(rounds, start + block); i++) {
          times[name].push(await selectAndReport(engine, queries[i % queries.length]!, `user-${i % 40}`, 'bench'));
        }
      }
    }
    const drainStarted = performance.now();
    await learned.flush();
    const drainMs = performance.now() - drainStarted;
    await plain.flush();
    for (const list of Object.values(times)) list.sort((a, b) => a - b);
    const stats = learning.stats();
    return {
      selections: rounds,
      withoutLearning: { p50Ms: ms(times.plain, 0.5), p99Ms: ms(times.plain, 0.99) },
      whileLearning: { p50Ms: ms(times.learning, 0.5), p99Ms: ms(times.learning, 0.99) },
      p99AddedMs: round((percentile(times.learning, 0.99) ?? 0) - (percentile(times.plain, 0.99) ?? 0)),
      learned: stats.learned,
      backlogDrainMs: round(drainMs),
      examplesHeld: stats.examples,
    };
  } finally {
    await plain.close();
    await learned.close();
  }
}

/** Time from the third teaching outcome to the gold tool at rank 1, per taught query. */
async function timeToEffect(db: Database, learning: Learning, queries: readonly DevQuery[], samples: number) {
  const engine = engineOver(db, learning);
  const waits: number[] = [];
  let skipped = 0;
  try {
    for (const [n, query] of queries.entries()) {
      if (waits.length >= samples) break;
      const probe = async () => (await engine.selectTools({ query: query.query, k: 10, log: false, context: { orgId: 'effect' } })).tools;
      const before = await probe();
      if (before[0] && query.gold.includes(before[0].name)) continue;
      if (!before.some((tool) => query.gold.includes(tool.name))) {
        skipped++;
        continue;
      }
      for (const user of ['a', 'b']) await selectAndReport(engine, query, `${user}-${n}`, 'effect');
      const t0 = performance.now();
      await selectAndReport(engine, query, `c-${n}`, 'effect');
      let top = (await probe())[0];
      while (!(top && query.gold.includes(top.name)) && performance.now() - t0 < 2_000) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        top = (await probe())[0];
      }
      if (top && query.gold.includes(top.name)) waits.push(performance.now() - t0);
      else skipped++;
    }
    waits.sort((a, b) => a - b);
    return { taught: waits.length, notOfferedOrNotFirst: skipped, p50Ms: ms(waits, 0.5), maxMs: round(waits.at(-1) ?? 0), includesOutcomeBatchMs: 50 };
  } finally {
    await engine.close();
  }
}

/** The `learning` bench section. */
export async function benchLearning(options: { rounds?: number; samples?: number } = {}) {
  // The few Seal-Tools names the catalog refuses (spaces, "__") are left out with their queries.
  const tools = readJsonl<{ name: string; description: string; parameters?: Record<string, unknown> }>(benchDataFile('seal-tools', 'tools.jsonl')).filter(
    (tool) => /^[A-Za-z0-9_.-]{1,128}$/.test(tool.name) && !tool.name.includes('__'),
  );
  const names = new Set(tools.map((tool) => tool.name));
  const queries = readJsonl<DevQuery>(benchDataFile('seal-tools', 'dev.jsonl')).filter((query) => query.gold.length === 1 && names.has(query.gold[0]!));
  const { db } = await openStore({ kind: 'memory' });
  const learning = createLearning({ db, embedder: createOfflineEmbedder(), settings: { sweepIntervalMs: 0 } });
  try {
    await createCatalogService({ db }).syncPlugin({
      pluginId: 'seal',
      version: '1.0.0',
      tools: tools.map((tool) => ({ name: tool.name, description: tool.description, ...(tool.parameters ? { parameters: tool.parameters } : {}) })),
    });
    const cost = await latencyCost(db, learning, queries, options.rounds ?? 600);
    const effect = await timeToEffect(db, learning, queries, options.samples ?? 20);
    return { tools: tools.length, embedder: 'quiver-offline', cost, timeToRankOne: effect };
  } finally {
    await learning.close();
    await db.close();
  }
}
