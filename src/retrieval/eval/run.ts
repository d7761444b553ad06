/**
 * @module retrieval/eval/run
 * Runs labelled queries through a retrieval index and reports the `quiver eval` metrics
 * (DESIGN §5). Latency is the wall time of each `search` call (performance.now()) after
 * a short warm-up; the index build is timed separately.
 */
import type { RetrievalDocument } from '../document.ts';
import type { Embedder } from '../embedders/embedder.ts';
import { createOfflineEmbedder } from '../embedders/offline.ts';
import { createRetrievalIndex, type RetrievalOptions } from '../retrieval-index.ts';
import type { EvalQuery } from './load.ts';
import { averageMetrics, latencyPercentile, queryMetrics, type MetricTotals, type QueryMetrics } from './metrics.ts';

/** The standard cut-offs every report carries. */
export const standardRecallKs = [1, 3, 5, 10] as const;
export const standardCompletenessKs = [5, 10] as const;
/** Ranking depth: deep enough for every k and for MRR. */
const rankingDepth = 100;
/** Untimed searches before timing starts. */
const warmupQueries = 20;

/** The metrics of one evaluation run: the averaged query metrics, latency and timings. */
export interface EvalReport extends MetricTotals {
  latencyMs: { p50: number; p95: number; p99: number };
  buildMs: number;
  totalMs: number;
  warnings: string[];
}

/** Builds an index over `documents` and evaluates `queries`; the default embedder is the offline one. */
export async function runEvaluation(input: {
  documents: readonly RetrievalDocument[];
  queries: readonly EvalQuery[];
  ks?: readonly number[];
  embedder?: Embedder | null;
  options?: RetrievalOptions;
}): Promise<EvalReport> {
  const started = performance.now();
  const ks = [...new Set([...standardRecallKs, ...standardCompletenessKs, ...(input.ks ?? [])])].sort((a, b) => a - b);
  const embedder = input.embedder === null ? undefined : (input.embedder ?? createOfflineEmbedder());
  const index = createRetrievalIndex({ ...(embedder ? { embedder } : {}), options: input.options ?? {} });
  await index.build(input.documents);
  const buildMs = performance.now() - started;
  const warnings = [...index.warnings];
  const depth = Math.max(rankingDepth, ...ks);
  const perQuery: QueryMetrics[] = [];
  const latencies: number[] = [];
  const searchWarnings = new Set<string>();
  // Warm the JIT and the tokenizer caches on a few queries first: the contract's latency is
  // that of a serving process, not of a cold start (DESIGN §6 measures warm selection).
  for (const query of input.queries.slice(0, warmupQueries)) await index.search(query.query, { k: depth, includeRanks: false });
  for (const query of input.queries) {
    const before = performance.now();
    const { results, warnings: queryWarnings } = await index.search(query.query, { k: depth, includeRanks: false });
    latencies.push(performance.now() - before);
    for (const warning of queryWarnings) searchWarnings.add(warning);
    perQuery.push(queryMetrics(results.map((r) => r.id), query.items, ks));
  }
  for (const warning of searchWarnings) if (!warnings.includes(warning)) warnings.push(warning);
  const totals = averageMetrics(perQuery, ks);
  latencies.sort((a, b) => a - b);
  return {
    ...totals,
    latencyMs: { p50: latencyPercentile(latencies, 0.5), p95: latencyPercentile(latencies, 0.95), p99: latencyPercentile(latencies, 0.99) },
    buildMs,
    totalMs: performance.now() - started,
    warnings,
  };
}

const round = (value: number, digits: number): number => Number(value.toFixed(digits));

/** The report as the contract's JSON object: recall@k for 1, 3, 5, 10 and any extra k asked. */
export function reportJson(report: EvalReport, ks: readonly number[] = []): Record<string, unknown> {
  const json: Record<string, unknown> = { n: report.n };
  const recallKs = [...new Set([...standardRecallKs, ...ks])].sort((a, b) => a - b);
  for (const k of recallKs) json[`recall@${k}`] = round(report.recall.get(k) ?? 0, 4);
  for (const k of standardCompletenessKs) json[`comp@${k}`] = round(report.completeness.get(k) ?? 0, 4);
  json['ndcg@10'] = round(report.ndcg10, 4);
  json.mrr = round(report.mrr, 4);
  json.latency_ms = {
    p50: round(report.latencyMs.p50, 3),
    p95: round(report.latencyMs.p95, 3),
    p99: round(report.latencyMs.p99, 3),
  };
  return json;
}

/** The report as a readable table. */
export function reportTable(report: EvalReport, ks: readonly number[] = []): string {
  const recallKs = [...new Set([...standardRecallKs, ...ks])].sort((a, b) => a - b);
  const rows: [string, string][] = [['queries', String(report.n)]];
  for (const k of recallKs) rows.push([`Recall@${k}`, (report.recall.get(k) ?? 0).toFixed(3)]);
  for (const k of standardCompletenessKs) rows.push([`Comp@${k}`, (report.completeness.get(k) ?? 0).toFixed(3)]);
  rows.push(['nDCG@10', report.ndcg10.toFixed(3)], ['MRR', report.mrr.toFixed(3)]);
  rows.push(
    ['latency p50 / p95 / p99', `${report.latencyMs.p50.toFixed(2)} / ${report.latencyMs.p95.toFixed(2)} / ${report.latencyMs.p99.toFixed(2)} ms`],
    ['index build', `${report.buildMs.toFixed(0)} ms`],
    ['total', `${report.totalMs.toFixed(0)} ms`],
  );
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}
