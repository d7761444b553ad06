/**
 * @module telemetry/selection
 * The selection engine, measured and traced from outside: `instrumentSelection` returns the
 * engine with a `selectTools` that times each selection (`quiver_selection_duration_seconds`),
 * records the pipeline's own stage timings (`quiver_selection_stage_duration_seconds`) and, when
 * traced, wraps it in a `selection` span with the `retrieval` and `rerank` stages as child
 * spans. The pipeline measures its stages itself (`metadata.stageTimingsMs`) and they run one
 * after the other, so the child spans are placed from those durations: no timer is added to
 * the hot path.
 */
import { context, trace, type Span } from '@opentelemetry/api';
import type { SelectionEngine, SelectionResult, StageTimings } from '../selection/index.ts';
import { QUIVER_VERSION } from '../core/version.ts';
import { SELECTION_STAGES, errorCodeOf, type QuiverInstruments } from './quiver-metrics.ts';
import { SpanKind, TRACER_NAME, inSpan } from './tracing/spans.ts';

/** Stages shown as child spans, and their span names. */
const TRACED_STAGES: Partial<Record<keyof StageTimings, string>> = { retrieval: 'selection.retrieval', bandit: 'selection.rerank' };

function recordStages(instruments: QuiverInstruments, timings: StageTimings): void {
  for (const stage of SELECTION_STAGES) {
    const ms = timings[stage];
    if (Number.isFinite(ms)) instruments.selectionStages.observe({ stage }, ms / 1000);
  }
}

/** Child spans for the traced stages, laid end to end from the span's start (epoch ms). */
function stageSpans(span: Span, startedAtMs: number, result: SelectionResult): void {
  const timings = result.metadata.stageTimingsMs;
  const tracer = trace.getTracer(TRACER_NAME, QUIVER_VERSION);
  const parent = trace.setSpan(context.active(), span);
  let offset = 0;
  for (const stage of SELECTION_STAGES) {
    const ms = timings[stage] ?? 0;
    const name = TRACED_STAGES[stage];
    if (name) {
      const child = tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: startedAtMs + offset, attributes: { 'quiver.selection.stage': stage, 'quiver.timing': 'pipeline-measured' } }, parent);
      child.end(startedAtMs + offset + ms);
    }
    offset += ms;
  }
  span.setAttributes({
    'quiver.selection.method': result.metadata.method,
    'quiver.selection.tools': result.tools.length,
    'quiver.selection.tokens_sent': result.metadata.tokens.sent,
    ...Object.fromEntries(SELECTION_STAGES.map((stage) => [`quiver.selection.${stage}_ms`, timings[stage]])),
  });
}

/** The engine with `selectTools` measured and traced; every other member is the engine's own. */
export function instrumentSelection(engine: SelectionEngine, instruments: QuiverInstruments): SelectionEngine {
  const select = engine.selectTools.bind(engine);
  const selectTools: SelectionEngine['selectTools'] = (input, options) =>
    inSpan('selection', { kind: SpanKind.INTERNAL }, async (span) => {
      const started = performance.now();
      const startedAtMs = performance.timeOrigin + started;
      try {
        const result = await select(input, options);
        instruments.selections.observe({ outcome: 'success' }, (performance.now() - started) / 1000);
        recordStages(instruments, result.metadata.stageTimingsMs);
        if (span) stageSpans(span, startedAtMs, result);
        return result;
      } catch (error) {
        instruments.selections.observe({ outcome: 'error' }, (performance.now() - started) / 1000);
        instruments.errors.inc({ source: 'selection', code: errorCodeOf(error) });
        throw error;
      }
    });
  return Object.assign(Object.create(Object.getPrototypeOf(engine) as object) as SelectionEngine, engine, { selectTools });
}
