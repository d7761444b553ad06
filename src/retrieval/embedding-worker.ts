/**
 * @module retrieval/embedding-worker
 * Embeddings kept current by themselves (issue #15, seed 001 §4.2): after any catalog write
 * that touches tools (install, sync, upgrade, edits) the worker embeds what is pending or stale
 * in the background, debounced so a burst of writes costs one run, one run at a time (a
 * request during a run queues exactly one more). A periodic sweep catches writes made by other
 * processes. At start it marks stale the tools whose vectors belong to another model, so
 * switching embedders re-embeds everything. Failures are reported in `status()` and logged,
 * never thrown at the writer (ranking fails open, DESIGN §3.4).
 */
import type { Database } from '../store/database.ts';
import { countEmbeddingStatuses, markStaleForModel } from '../store/repositories/embeddings.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import type { Embedder } from './embedders/embedder.ts';
import type { ReportingEmbedder } from './embedders/fallback.ts';
import { recomputeStale, type RecomputeResult } from './embedding-sync.ts';

/** The periodic job that sweeps for tools without vectors, on one replica at a time (registered by the app). */
export const EMBEDDING_SWEEP_JOB = 'embeddings.sweep';

/** The outcome of the last finished run. */
export interface EmbeddingRunReport {
  finishedAt: string;
  durationMs: number;
  embedded: number;
  changedMeanwhile: number;
  warnings: string[];
}

/** What `quiver embeddings status` shows. */
export interface EmbeddingStatus {
  model: string;
  dimensions: number;
  /** Live tools by embedding status. */
  tools: Record<string, number>;
  running: boolean;
  queued: boolean;
  lastRun: EmbeddingRunReport | null;
  /** Set when the configured model could not load and the fallback embeds instead (issue #25). */
  fallback?: { configured: string; warning: string };
}

export interface EmbeddingWorkerOptions {
  db: Database;
  embedder: Embedder;
  logger?: Logger;
  /** Wait after a change before running, so a burst of writes costs one run (ms, default 200). */
  debounceMs?: number;
  /** Periodic sweep for changes made elsewhere (ms, default 60 000; 0 turns it off). */
  sweepIntervalMs?: number;
  /** False: run only when asked (`runNow`); no runs after changes, at start or on a sweep (default true). */
  background?: boolean;
  /** Called after a run that embedded something (drop retrieval caches). */
  onEmbedded?: (result: RecomputeResult) => void;
}

/** The background embedding worker. */
export interface EmbeddingWorker {
  /** Asks for a run soon (debounced). */
  schedule(): void;
  /** Runs now (after any running run) and resolves with its report; `all` re-embeds every tool. */
  runNow(options?: { all?: boolean }): Promise<EmbeddingRunReport>;
  /** Resolves when no run is running or scheduled. */
  idle(): Promise<void>;
  status(): Promise<EmbeddingStatus>;
  close(): Promise<void>;
}

/** The fallback part of the status, for an embedder that reports one (`embedders/fallback.ts`). */
function fallbackOf(embedder: Embedder): Pick<EmbeddingStatus, 'fallback'> {
  const status = (embedder as Partial<ReportingEmbedder>).status?.();
  return status?.fallback && status.warning ? { fallback: { configured: status.configured, warning: status.warning } } : {};
}

/** Creates the worker; in the background mode it starts with a model check and a first run. */
export function createEmbeddingWorker(options: EmbeddingWorkerOptions): EmbeddingWorker {
  const { db, embedder } = options;
  const logger = options.logger ?? silentLogger;
  const debounceMs = options.debounceMs ?? 200;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<EmbeddingRunReport> | undefined;
  let queued = false;
  let closed = false;
  let lastRun: EmbeddingRunReport | null = null;
  // The model whose stale vectors were last marked: a fallback embedder (issue #25) changes it.
  let checkedModel: string | undefined;

  async function runOnce(all: boolean): Promise<EmbeddingRunReport> {
    const started = performance.now();
    const warnings: string[] = [];
    let embedded = 0;
    let changedMeanwhile = 0;
    try {
      if (all || checkedModel !== embedder.modelId) {
        const model = embedder.modelId;
        const marked = await markStaleForModel(db, model, { all });
        checkedModel = model;
        if (marked > 0) logger.info({ marked, model: embedder.modelId }, 'embeddings: tools marked stale for this model');
      }
      const result = await recomputeStale(db, embedder);
      embedded = result.embedded.length;
      changedMeanwhile = result.changedMeanwhile.length;
      warnings.push(...result.warnings);
      if (embedded > 0) options.onEmbedded?.(result);
    } catch (error) {
      warnings.push(`embedding run failed: ${(error as Error).message}`);
    }
    const report: EmbeddingRunReport = {
      finishedAt: new Date().toISOString(),
      durationMs: Math.round(performance.now() - started),
      embedded,
      changedMeanwhile,
      warnings,
    };
    lastRun = report;
    if (warnings.length > 0) logger.warn({ warnings }, 'embeddings: run finished with warnings');
    else if (embedded > 0) logger.debug({ embedded, durationMs: report.durationMs }, 'embeddings: run finished');
    return report;
  }

  function start(all: boolean): Promise<EmbeddingRunReport> {
    const run = (running ?? Promise.resolve(undefined)).then(() => runOnce(all));
    const settled = run.finally(() => {
      if (running === settled) running = undefined;
      if (queued && !closed) {
        queued = false;
        void start(false);
      }
    });
    running = settled;
    return settled;
  }

  const background = options.background ?? true;

  function schedule(): void {
    if (closed || !background) return;
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (running) queued = true;
      else void start(false);
    }, debounceMs);
    timer.unref?.();
  }

  const sweepMs = options.sweepIntervalMs ?? 60_000;
  const sweep = background && sweepMs > 0 ? setInterval(schedule, sweepMs) : undefined;
  sweep?.unref?.();
  schedule();

  return {
    schedule,
    runNow: ({ all = false } = {}) => start(all),
    async idle() {
      while (timer !== undefined || running || queued) {
        if (running) await running.catch(() => {});
        else await new Promise((resolve) => setTimeout(resolve, debounceMs));
      }
    },
    async status() {
      return {
        model: embedder.modelId,
        dimensions: embedder.dimensions,
        tools: await countEmbeddingStatuses(db),
        running: running !== undefined,
        queued: queued || timer !== undefined,
        lastRun,
        ...fallbackOf(embedder),
      };
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (sweep) clearInterval(sweep);
      queued = false;
      await running?.catch(() => {});
    },
  };
}
