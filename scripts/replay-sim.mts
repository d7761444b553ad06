// An in-process approximation of `quiver eval --replay` (issue #25, docs/retrieval.md "Learning
// that transfers"): the real retrieval index (offline embedder, cold catalog), learned-example
// overlay, agreement, Thompson rerank and simulated outcome code, without the App and PGlite, so
// a run of the 1,734 MetaTool dev requests takes minutes instead of a quarter of an hour. Not the
// product: names are bench ids, arms and examples live in memory, no redaction or caps.
// Usage: npx tsx scripts/replay-sim.mts [noise 0.25] [feedback 1|0] [queries.jsonl | long] [window 500]
// `long`: MetaTool's dev requests followed by its public example requests (examples.jsonl as
// single-tool queries; 4,674 requests, about 23 per tool), closer to a held-out stream of ~30
// per tool (written to the temporary folder; use window 1000).
// Env: SIM_SCORING / SIM_SETTINGS (JSON overrides of the overlay scoring / learning settings),
// SIM_INDEX (retrieval options), SIM_C (bandit relevance strength; 10000 ≈ no draw),
// SIM_NOEXPLORE=1 (no exploration slot), SIM_MODE=field (write learned requests into the
// shared index's example field instead, index upserted per outcome), SIM_TAG (label),
// SIM_SEED (default 1), SIM_TOOLS (catalog, default MetaTool's), SIM_EMB=offline (the hashed embedder
// instead of the token table, the product's default since 2026-11-27; before 2026-11-28 the
// simulation defaulted to the hashed one), SIM_CTX=0 (the bandit's former ½ prior instead of the
// context's rate), NEG_W / NEG_MODE skip|miss|all / NEG_FLOOR (negative evidence, tried and not
// kept: offered tools not called penalised for similar requests), SIM_TEACHMISS=1 (diagnostic: a
// request whose gold tool was not offered teaches it anyway, as if a second search had found it),
// SIM_RETRY=1 (as `quiver eval --replay --retry-on-miss`: a miss searches again for 2k tools and
// calls the gold among them), SIM_POOL (the bandit's pool factor, default 2).
import { fileURLToPath } from 'node:url';
const SRC = process.env.SRC ?? fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const imp = (p: string) => import(`${SRC}/src/${p}`);

const noise = Number(process.argv[2] ?? '0.25');
const feedback = (process.argv[3] ?? '1') === '1';
let queriesFile = process.argv[4] ?? `${SRC}/bench/data/metatool/dev.jsonl`;
if (queriesFile === 'long') {
  const { readFileSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const lines = readFileSync(`${SRC}/bench/data/metatool/dev.jsonl`, 'utf8').split('\n').filter((line) => line.trim());
  readFileSync(`${SRC}/bench/data/metatool/examples.jsonl`, 'utf8').split('\n').filter((line) => line.trim()).forEach((line, i) => {
    const row = JSON.parse(line) as { tool_id: string; query: string };
    lines.push(JSON.stringify({ id: `example${i}`, query: row.query, gold: [row.tool_id] }));
  });
  queriesFile = `${tmpdir()}/quiver-replay-sim-long-${process.pid}.jsonl`;
  writeFileSync(queriesFile, lines.join('\n') + '\n');
}
const toolsFile = process.env.SIM_TOOLS ?? `${SRC}/bench/data/metatool/tools.jsonl`;
const windowSize = Number(process.argv[5] ?? '500');
const seed = Number(process.env.SIM_SEED ?? '1');

const { loadEvalData } = await imp('retrieval/eval/load.ts');
const { createRetrievalIndex } = await imp('retrieval/retrieval-index.ts');
const { adaptRetrievalIndex } = await imp('selection/retrieval.ts');
const { createOfflineEmbedder } = await imp('retrieval/embedders/offline.ts');
const { withLearnedExamples } = await imp('selection/learning/retrieval.ts');
const { buildOverlay, contentTerms } = await imp('selection/learning/overlay.ts');
const { terms } = await imp('retrieval/tokenizer.ts');
const { defaultLearningSettings } = await imp('selection/learning/settings.ts');
const { calibrateFloor, shippedCalibrationGroups } = await imp('retrieval/calibration.ts');
const { calibrateAgreementFloor } = await imp('selection/learning/agreement.ts');
const { thompsonRerank, contextOutcomes } = await imp('selection/bandit.ts');
const { createSampler } = await imp('selection/sampler.ts');
const { createSeededRandom } = await imp('selection/random.ts');
const { simulateOutcome } = await imp('selection/replay/simulated-outcome.ts');
const { shuffled } = await imp('selection/replay/replay.ts');
const { scoreInteraction, summarizeWindow, windowsOf } = await imp('selection/replay/windows.ts');

const data = await loadEvalData({ tools: toolsFile, queries: queriesFile });
if (process.argv[4] === 'long') (await import('node:fs')).rmSync(queriesFile, { force: true });
const documents = data.documents.map((d: any) => ({ ...d, exampleQueries: [], description: [d.description, ...(d.extraText ?? [])].filter(Boolean).join('\n'), extraText: [] }));
const embedder = process.env.SIM_EMB === 'offline' ? createOfflineEmbedder() : (await imp('retrieval/embedders/shipped-model.ts')).createShippedTableEmbedder();
const index = createRetrievalIndex({ embedder, options: process.env.SIM_INDEX ? JSON.parse(process.env.SIM_INDEX) : {} });
await index.build(documents);
const base = adaptRetrievalIndex(index, { method: 'hybrid' });

const groups = shippedCalibrationGroups();
const settings = { ...defaultLearningSettings, ...(process.env.SIM_SETTINGS ? JSON.parse(process.env.SIM_SETTINGS) : {}) };
const scoring: any = {
  minSimilarity: (await calibrateFloor(embedder, groups, { maxGroups: 40 })).floor,
  weight: settings.weight,
  contributorShare: settings.contributorShare,
  lexicalWeight: settings.lexicalWeight,
  agreementShare: settings.agreementShare,
  agreementFloor: calibrateAgreementFloor(groups, contentTerms, { maxGroups: 80 }).floor,
  ...(process.env.SIM_SCORING ? JSON.parse(process.env.SIM_SCORING) : {}),
};
const examples: any[] = [];
let overlay: any;
const vectorOf = new Map<string, Float32Array>();
async function analyse(q: string) {
  let v = vectorOf.get(q);
  if (!v) {
    [v] = await embedder.embed([q]);
    vectorOf.set(q, v!);
  }
  return { vector: v!, terms: contentTerms(q) };
}
const retrieval = withLearnedExamples(base, {
  overlayFor: () => overlay,
  analyseQuery: analyse,
  calledAfterFor: () => undefined,
} as any);

const negatives: any[] = [];
const NEG_W = Number(process.env.NEG_W ?? '0');
const NEG_MODE = process.env.NEG_MODE ?? 'skip';
const NEG_FLOOR = process.env.NEG_FLOOR ? Number(process.env.NEG_FLOOR) : scoring.minSimilarity;
async function searchWithNeg(q: string, k: number) {
  if (NEG_W <= 0 || negatives.length === 0) return retrieval.search(q, { k, orgId: 'replay' });
  const found = await retrieval.search(q, { k: k + 10, orgId: 'replay' });
  const a = await analyse(q);
  const best = found.results[0]?.score ?? 1;
  const pen = new Map<string, number>();
  for (const n of negatives) {
    let s = 0; for (let d = 0; d < a.vector.length; d++) s += a.vector[d] * n.vector[d];
    if (s <= NEG_FLOOR) continue;
    const p = NEG_W * Math.min(1, (s - NEG_FLOOR) / (1 - NEG_FLOOR));
    pen.set(n.toolId, process.env.NEG_SUM ? (pen.get(n.toolId) ?? 0) + p : Math.max(pen.get(n.toolId) ?? 0, p));
  }
  const results = found.results.map((h: any) => ({ ...h, score: h.score - best * Math.min(process.env.NEG_SUM ? Number(process.env.NEG_SUM) : 10, pen.get(h.id) ?? 0) })).sort((x: any, y: any) => y.score - x.score).slice(0, k);
  return { ...found, results };
}
const random = createSeededRandom(seed);
const sampler = createSampler(createSeededRandom(seed + 7));
const arms = new Map<string, { alpha: number; beta: number }>();
const queries = shuffled(data.queries, createSeededRandom(seed ^ 0x5bd1e995));
const scored: any[] = [];
const k = 5;
const started = performance.now();
let i = 0;
for (const query of queries) {
  const POOL = Number(process.env.SIM_POOL ?? 2);
  const found = await searchWithNeg(query.query, Math.ceil(POOL * k));
  const picks = thompsonRerank(found.results, { k, sampler, arm: (id: string) => arms.get(id), poolFactor: POOL, relevanceStrength: Number(process.env.SIM_C ?? 8), exploration: process.env.SIM_NOEXPLORE ? false : true, ...(process.env.SIM_CTX === '0' ? {} : { context: contextOutcomes(arms.values()) }) });
  const offered = picks.map((p: any) => p.id);
  const outcome = simulateOutcome(offered, query.items, { k, noise, random });
  if (process.env.SIM_RETRY && !outcome.noisy && outcome.called.length === 0) {
    // The simulated agent, finding nothing it can use, asks again for twice as many tools.
    const again = await searchWithNeg(query.query, Math.ceil(POOL * 2 * k));
    const picks2 = thompsonRerank(again.results, { k: 2 * k, sampler, arm: (id: string) => arms.get(id), poolFactor: POOL, relevanceStrength: Number(process.env.SIM_C ?? 8), exploration: process.env.SIM_NOEXPLORE ? false : true, ...(process.env.SIM_CTX === '0' ? {} : { context: contextOutcomes(arms.values()) }) });
    outcome.called = simulateOutcome(picks2.map((p: any) => p.id), query.items, { k: 2 * k, noise: 0, random }).called;
  }
  if (process.env.SIM_TEACHMISS && !outcome.noisy && outcome.called.length === 0) outcome.called = query.items.map((item: string[]) => item[0]);
  if (feedback) {
    for (const id of outcome.called) {
      const arm = arms.get(id) ?? { alpha: 1, beta: 1 };
      arms.set(id, { alpha: arm.alpha + 1, beta: arm.beta });
      const a = await analyse(query.query);
      examples.push({ id: `e${i}-${id}`, toolId: id, contributor: `u${i}`, vector: a.vector, terms: a.terms, fieldTerms: terms(query.query) });
    }
    if (NEG_W > 0) {
      const firstCalled = outcome.called.length ? Math.min(...outcome.called.map((id: string) => offered.indexOf(id))) : offered.length;
      const neg = outcome.called.length === 0 ? (NEG_MODE === 'skip-only' ? [] : offered) : NEG_MODE === 'miss' ? [] : NEG_MODE === 'all' ? offered.filter((id: string) => !outcome.called.includes(id)) : offered.slice(0, firstCalled);
      const a = await analyse(query.query);
      for (const id of neg) negatives.push({ toolId: id, vector: a.vector });
    }
    if (outcome.called.length > 0 && process.env.SIM_MODE !== 'field') overlay = buildOverlay(examples, embedder.dimensions, scoring);
    if (process.env.SIM_MODE === 'field') for (const id of outcome.called) {
      const doc = documents.find((d: any) => d.id === id);
      doc.exampleQueries = [...doc.exampleQueries, query.query];
      await index.upsert([doc]);
    }
  }
  scored.push(scoreInteraction(offered, query.items, { calledGold: outcome.called.length > 0 && !outcome.noisy, noisy: outcome.noisy }));
  i++;
}
const fmt = (w: any) => `${w['recall@1'].toFixed(3)} / ${w['recall@5'].toFixed(3)} / ${(w['comp@5'] ?? 0).toFixed(3)}`;
const wins = windowsOf(scored, windowSize);
console.log(`noise ${noise} feedback ${feedback} ${process.env.SIM_TAG ?? ''} | ${wins.map(fmt).join(' | ')} | all ${fmt(summarizeWindow(scored, 1))} | ${Math.round(performance.now() - started)} ms`);
