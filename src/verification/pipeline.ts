/**
 * @module verification/pipeline
 * Runs the stages in STAGE_ORDER (seed 000 §4.2), one after the other, each under its own time
 * limit and the caller's abort signal. A stage is trusted for nothing: one that throws, times
 * out or returns a malformed result scores 0 with an issue saying so, and a stage this hub does
 * not have (not in the registry) is recorded `not_run` with 0, so the verdict stays honest.
 */
import { silentLogger, type Logger } from '../core/logger.ts';
import { STAGE_ORDER, type Stage, type StageName, type StageResult, type VerificationSettings, type VerificationSubject } from './types.ts';

/** How a stage ended. */
export type StageStatus = 'passed' | 'error' | 'timeout' | 'not_run';

/** A stage's result as the report keeps it. */
export interface StageOutcome extends StageResult {
  status: StageStatus;
  durationMs: number;
}

/** One progress event of `quiver plugin verify`. */
export type PipelineProgress =
  | { stage: StageName; event: 'start' }
  | { stage: StageName; event: 'message'; message: string }
  | { stage: StageName; event: 'done'; status: StageStatus; score: number; durationMs: number };

/** Options of `runPipeline`. */
export interface RunPipelineOptions {
  subject: VerificationSubject;
  stages: Partial<Record<StageName, Stage>>;
  settings: VerificationSettings;
  logger?: Logger;
  signal?: AbortSignal;
  onProgress?: (progress: PipelineProgress) => void;
}

/** Every stage's outcome, in STAGE_ORDER, and the wall time of them all. */
export interface PipelineResult {
  stages: Record<StageName, StageOutcome>;
  totalMs: number;
}

/** Checks what a stage returned; a malformed result is the stage's bug and scores 0. */
export function normaliseResult(result: unknown): StageResult {
  const value = result as Partial<StageResult> | null;
  if (value === null || typeof value !== 'object' || typeof value.score !== 'number' || !Number.isFinite(value.score) || !Array.isArray(value.issues)) {
    throw new Error('the stage returned a malformed result (needs a finite score and an issues array)');
  }
  return { ...value, score: Math.max(0, Math.min(100, Math.round(value.score))), issues: value.issues } as StageResult;
}

function failed(status: StageStatus, code: string, message: string, durationMs: number): StageOutcome {
  return { status, durationMs, score: 0, issues: [{ severity: 'high', code, message }] };
}

/** Runs one stage with a timeout; never throws. */
async function runStage(name: StageName, stage: Stage, options: RunPipelineOptions, logger: Logger): Promise<StageOutcome> {
  const { settings } = options;
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  if (options.signal?.aborted) onOuterAbort();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), settings.stageTimeoutMs);
  });
  const aborted = new Promise<'aborted'>((resolve) => {
    if (controller.signal.aborted) resolve('aborted');
    else controller.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const run = Promise.resolve().then(() =>
      stage({
        subject: options.subject,
        settings,
        logger: logger.child({ stage: name }),
        signal: controller.signal,
        progress: (message) => options.onProgress?.({ stage: name, event: 'message', message: String(message).slice(0, 500) }),
      }),
    );
    const winner = await Promise.race([run.then((result) => ({ result })), timedOut, aborted]);
    if (winner === 'timeout') {
      controller.abort(new Error(`stage ${name} timed out`));
      run.catch(() => undefined);
      return failed('timeout', 'stage_timeout', `the ${name} stage did not finish within ${settings.stageTimeoutMs} ms; scored 0`, elapsed());
    }
    if (winner === 'aborted') {
      run.catch(() => undefined);
      return failed('error', 'stage_aborted', `the ${name} stage was aborted; scored 0`, elapsed());
    }
    return { ...normaliseResult(winner.result), status: 'passed', durationMs: elapsed() };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.warn({ stage: name, error: message }, 'verification stage failed');
    return failed('error', 'stage_error', `the ${name} stage failed: ${message.slice(0, 300)}; scored 0`, elapsed());
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
}

/** Runs every stage in order and returns their outcomes. */
export async function runPipeline(options: RunPipelineOptions): Promise<PipelineResult> {
  const logger = options.logger ?? silentLogger;
  const started = performance.now();
  const stages = {} as Record<StageName, StageOutcome>;
  for (const name of STAGE_ORDER) {
    const stage = options.stages[name];
    options.onProgress?.({ stage: name, event: 'start' });
    const outcome =
      stage === undefined
        ? { status: 'not_run' as const, durationMs: 0, score: 0, issues: [{ severity: 'medium' as const, code: 'stage_not_run', message: `the ${name} stage is not available on this hub; scored 0` }] }
        : await runStage(name, stage, options, logger);
    stages[name] = outcome;
    options.onProgress?.({ stage: name, event: 'done', status: outcome.status, score: outcome.score, durationMs: outcome.durationMs });
  }
  return { stages, totalMs: Math.round(performance.now() - started) };
}
