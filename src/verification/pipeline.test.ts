/** The pipeline: order, per-stage time limit, a throwing or malformed stage scores 0, a missing one is not_run, progress. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runPipeline, type PipelineProgress } from './pipeline.ts';
import { STAGE_ORDER, type Stage, type VerificationSubject } from './types.ts';

const subject: VerificationSubject = {
  pluginId: '00000000-0000-0000-0000-000000000001',
  pluginName: 'demo',
  version: '1.0.0',
  sourceType: 'path',
  source: {},
  codeDir: null,
  manifest: null,
  intelligence: null,
  tools: [],
  otherToolNames: [],
  launch: null,
};
const settings = { registryUrl: 'http://127.0.0.1:9', licenseAllowList: ['MIT'], stageTimeoutMs: 200 };

it('runs stages in order; errors, time-outs and malformed results score 0 with an issue; missing stages are not_run', async () => {
  const order: string[] = [];
  const ok = (score: number): Stage => async ({ subject: s, progress }) => {
    order.push(s.pluginName);
    progress('working');
    return { score, issues: [], metrics: { n: 1 } };
  };
  let sawAbort = false;
  const hanging: Stage = ({ signal }) =>
    new Promise((resolve) =>
      signal.addEventListener('abort', () => {
        sawAbort = true;
        resolve({ score: 100, issues: [] });
      }),
    );
  const progress: PipelineProgress[] = [];
  const result = await runPipeline({
    subject,
    settings,
    stages: {
      source: ok(90.6),
      staticAnalysis: async () => {
        throw new Error('parser exploded');
      },
      schemaValidation: ok(100),
      sandboxExecution: hanging,
      securityScan: async () => ({ score: Number.NaN, issues: [] }) as never,
    },
    onProgress: (event) => progress.push(event),
  });
  assert.deepEqual(Object.keys(result.stages), [...STAGE_ORDER]);
  assert.equal(result.stages.source.score, 91, 'rounded');
  assert.equal(result.stages.source.status, 'passed');
  assert.deepEqual(result.stages.source.metrics, { n: 1 });
  assert.equal(result.stages.staticAnalysis.status, 'error');
  assert.equal(result.stages.staticAnalysis.score, 0);
  assert.match(result.stages.staticAnalysis.issues[0]!.message, /parser exploded/);
  assert.equal(result.stages.sandboxExecution.status, 'timeout');
  assert.equal(result.stages.sandboxExecution.score, 0, 'a result after the time limit does not count');
  assert.equal(sawAbort, true, 'the stage was told to stop');
  assert.equal(result.stages.securityScan.status, 'error');
  assert.match(result.stages.securityScan.issues[0]!.message, /malformed/);
  assert.equal(result.stages.compatibility.status, 'not_run');
  assert.equal(result.stages.compatibility.issues[0]!.code, 'stage_not_run');
  assert.deepEqual(order, ['demo', 'demo']);
  assert.deepEqual(
    progress.filter((event) => event.event !== 'message').map((event) => `${event.stage}:${event.event}`),
    STAGE_ORDER.flatMap((stage) => [`${stage}:start`, `${stage}:done`]),
  );
  assert.ok(progress.some((event) => event.event === 'message' && event.stage === 'schemaValidation' && event.message === 'working'));
  assert.ok(result.totalMs >= result.stages.sandboxExecution.durationMs);
});

it('an aborted run stops the running stage and scores what remains 0', async () => {
  const controller = new AbortController();
  const result = await runPipeline({
    subject,
    settings: { ...settings, stageTimeoutMs: 10_000 },
    signal: controller.signal,
    stages: {
      source: () => {
        controller.abort(new Error('closing'));
        return new Promise(() => undefined);
      },
      schemaValidation: async () => ({ score: 100, issues: [] }),
    },
  });
  assert.equal(result.stages.source.status, 'error');
  assert.equal(result.stages.source.issues[0]!.code, 'stage_aborted');
  assert.equal(result.stages.schemaValidation.issues[0]!.code, 'stage_aborted');
});
