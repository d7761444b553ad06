/**
 * @module cli/bench/differential-sync
 * The differential-sync benchmark behind `quiver bench` (DESIGN §6: 1,000 tools with 3
 * changed in ≤ 100 ms, exactly 3 re-embedded). It writes a plugin named `bench-sync` into
 * the given database, so run it against a throwaway one.
 */
import type { Database } from '../../store/database.ts';
import { createCatalogService } from '../../catalog/service.ts';
import type { SyncPayload } from '../../catalog/sync-schema.ts';
import type { SyncReport } from '../../catalog/sync.ts';

/** What one benchmark run measured. */
export interface DifferentialSyncBench {
  tools: number;
  changed: number;
  markedStale: number;
  /** Median wall time of the measured re-syncs (after warm-up), in milliseconds. */
  durationMs: number;
}

const TOOL_COUNT = 1_000;

function benchPayload(version: string, changed: ReadonlySet<number>): SyncPayload {
  const categories = Array.from({ length: 10 }, (_, i) => ({ name: `bench-category-${i}`, description: `Benchmark category ${i}` }));
  const tools = Array.from({ length: TOOL_COUNT }, (_, i) => ({
    name: `bench_tool_${String(i).padStart(4, '0')}`,
    description: `Benchmark tool ${i}: does thing ${i} to records of kind ${i % 17}.${changed.has(i) ? ` Revised in ${version}.` : ''}`,
    parameters: {
      type: 'object',
      properties: { id: { type: 'string', description: 'record id' }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
      required: ['id'],
    },
    summary: `Does thing ${i}`,
    tags: ['bench', `kind-${i % 17}`],
    whenToUse: [`when the user asks for thing ${i}`],
    exampleQueries: [`do thing ${i} for record 42`, `run thing ${i}`],
    category: `bench-category-${i % 10}`,
  }));
  const pageMappings = categories.map((c, i) => ({ pagePattern: `bench-page-${i}*`, category: c.name, priority: i }));
  return { pluginId: 'bench-sync', version, tools, categories, pageMappings };
}

const WARM_UP_RUNS = 3;
const MEASURED_RUNS = 5;

/**
 * Seeds 1,000 tools through a sync, warms up, then re-syncs several times with the same 3
 * tools changed each time (a new revision text) and reports the median duration.
 */
export async function benchDifferentialSync(db: Database): Promise<DifferentialSyncBench> {
  const catalog = createCatalogService({ db });
  const changed = new Set([7, 500, 993]);
  await catalog.syncPlugin(benchPayload('1.0.0', new Set()));
  for (let run = 1; run <= WARM_UP_RUNS; run += 1) await catalog.syncPlugin(benchPayload(`1.0.${run}`, changed));
  const durations: number[] = [];
  let report: SyncReport | undefined;
  for (let run = 1; run <= MEASURED_RUNS; run += 1) {
    report = await catalog.syncPlugin(benchPayload(`1.1.${run}`, changed));
    durations.push(report.durationMs);
  }
  durations.sort((a, b) => a - b);
  return {
    tools: TOOL_COUNT,
    changed: report!.updated.length + report!.inserted.length,
    markedStale: report!.markedStale.length,
    durationMs: Math.round(durations[Math.floor(durations.length / 2)]! * 100) / 100,
  };
}
