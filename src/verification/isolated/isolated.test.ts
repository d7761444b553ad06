/**
 * The pipeline in a child process: the registered stages run there on a real plugin folder,
 * progress and the result come back over IPC, the hub's event loop stays free, and an abort
 * ends the child.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PipelineProgress } from '../pipeline.ts';
import { stageRegistry } from '../stages/index.ts';
import { STAGE_ORDER, type VerificationSubject } from '../types.ts';
import { runPipelineIsolated } from './index.ts';

async function subject(): Promise<VerificationSubject> {
  const codeDir = await mkdtemp(join(tmpdir(), 'quiver-isolated-'));
  await writeFile(join(codeDir, 'server.mjs'), "process.stdout.write('');\n");
  await writeFile(join(codeDir, 'package.json'), JSON.stringify({ name: 'demo', version: '1.0.0', license: 'MIT' }));
  return {
    pluginId: '00000000-0000-0000-0000-000000000001',
    pluginName: 'demo',
    version: '1.0.0',
    sourceType: 'path',
    source: { path: codeDir },
    codeDir,
    manifest: null,
    intelligence: null,
    tools: [{ name: 'echo', description: 'Echo text back.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
    otherToolNames: [],
    launch: null,
  };
}

const settings = { registryUrl: 'http://127.0.0.1:9', licenseAllowList: ['MIT'], stageTimeoutMs: 60_000 };

it('runs the registered stages in a child process and reports progress and the result', { timeout: 120_000 }, async () => {
  const progress: PipelineProgress[] = [];
  let ticks = 0;
  const ticker = setInterval(() => (ticks += 1), 20);
  const result = await runPipelineIsolated({ subject: await subject(), settings, stages: stageRegistry, onProgress: (event) => progress.push(event) }).finally(() => clearInterval(ticker));
  assert.deepEqual(Object.keys(result.stages), [...STAGE_ORDER]);
  for (const stage of STAGE_ORDER) {
    assert.equal(result.stages[stage].status === 'not_run', !(stage in stageRegistry), `${stage}: ${result.stages[stage].status}`);
  }
  assert.equal(result.stages.source.issues[0]?.code, 'unpinned_folder');
  assert.equal(result.stages.schemaValidation.score, 100);
  assert.deepEqual(
    progress.filter((event) => event.event === 'done').map((event) => event.stage),
    [...STAGE_ORDER],
  );
  assert.ok(ticks > 0, 'the parent event loop kept running while the child worked');
});

it('an abort stops the stages in the child: what had not finished is scored 0 as aborted', { timeout: 120_000 }, async () => {
  const controller = new AbortController();
  const result = await runPipelineIsolated({ subject: await subject(), settings, stages: stageRegistry, signal: controller.signal, onProgress: () => controller.abort() });
  const aborted = STAGE_ORDER.filter((stage) => result.stages[stage].issues.some((issue) => issue.code === 'stage_aborted'));
  assert.ok(aborted.length >= STAGE_ORDER.filter((stage) => stage in stageRegistry).length - 1, `aborted: ${aborted.join(', ')}`);
  for (const stage of aborted) assert.equal(result.stages[stage].score, 0);
});
