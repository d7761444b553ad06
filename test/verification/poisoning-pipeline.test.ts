/**
 * The static analysis and security scan stages through the real pipeline and verdict (issue
 * #10), taken from the stage registry: a poisoned plugin's verdict is capped at UNVERIFIED by
 * the security scan with the reason in the report's caps; a benign one gets no cap from them.
 * Only these two stages are given to the pipeline (the others are tested by their owners and
 * need a sandbox), so the other stages are `not_run` with 0 and cap the verdict themselves; the
 * assertions look at the caps these two stages set.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runPipeline } from '../../src/verification/pipeline.ts';
import { computeVerdict } from '../../src/verification/verdict.ts';
import { stageRegistry } from '../../src/verification/stages/index.ts';
import { POISONED_TOOLS } from '../../src/verification/stages/security-scan/poisoning-corpus.ts';
import { buildCorpusPlugin, contextFor, removeAll, startAdvisoryServer, subjectFor, type AdvisoryServer } from './stage-corpus.ts';

const folders: string[] = [];
let registry: AdvisoryServer;
before(async () => {
  registry = await startAdvisoryServer({});
});
after(async () => {
  await registry.close();
  await removeAll(folders);
});

async function verify(tools: Parameters<typeof buildCorpusPlugin>[0]['tools'], name: string) {
  const root = await buildCorpusPlugin({ name, tools });
  folders.push(root);
  const subject = await subjectFor(root, name);
  const { settings } = contextFor(subject, { registryUrl: registry.url });
  const progress: string[] = [];
  const pipeline = await runPipeline({
    subject,
    stages: { staticAnalysis: stageRegistry.staticAnalysis!, securityScan: stageRegistry.securityScan! },
    settings,
    onProgress: (event) => progress.push(`${event.stage}:${event.event}`),
  });
  const verdict = computeVerdict(pipeline.stages);
  const mine = verdict.caps.filter((cap) => cap.stage === 'staticAnalysis' || cap.stage === 'securityScan');
  return { pipeline, verdict, mine, progress };
}

describe('static analysis and security scan through the pipeline', () => {
  it('a poisoned plugin is capped at UNVERIFIED by the security scan, whatever its score', async () => {
    const { pipeline, verdict, mine, progress } = await verify([POISONED_TOOLS[0]!.tool], 'poisoned');
    assert.equal(pipeline.stages.securityScan.status, 'passed');
    assert.equal(pipeline.stages.staticAnalysis.status, 'passed');
    assert.equal(pipeline.stages.staticAnalysis.score, 100);
    assert.equal(verdict.trustLevel, 'UNVERIFIED');
    assert.deepEqual(mine.map((cap) => [cap.stage, cap.level]), [['securityScan', 'UNVERIFIED']]);
    assert.match(mine[0]!.reason, /tool poisoning in \d+ places?/);
    assert.ok(progress.includes('securityScan:done') && progress.includes('staticAnalysis:done'));
  });

  it('a benign plugin gets no cap from these stages: 0.20 × 100 + 0.25 × 100 = 45 with the rest not run', async () => {
    const { pipeline, verdict, mine } = await verify([{ name: 'echo', description: 'Echoes the text back.', inputSchema: { type: 'object', properties: {} } }], 'benign');
    assert.equal(pipeline.stages.sandboxExecution.status, 'not_run');
    assert.deepEqual(mine, []);
    assert.equal(verdict.overallScore, 45);
    assert.equal(verdict.scoreLevel, 'COMMUNITY');
  });
});
