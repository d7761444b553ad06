/**
 * Retrieval quality floors on the development sets kept in the repository (bench/data), run
 * through the same code path as `quiver eval`. The floors sit a little below what
 * docs/retrieval.md reports, so a regression fails here; raise them when retrieval improves.
 * Never skipped: the data is part of the repository, so a missing file is a failure.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadEvalData } from '../../src/retrieval/eval/load.ts';
import { runEvaluation, type EvalReport } from '../../src/retrieval/eval/run.ts';

const bench = fileURLToPath(new URL('../../bench/data/', import.meta.url));

async function evaluate(set: string, withExamples: boolean): Promise<EvalReport> {
  const data = await loadEvalData({
    tools: `${bench}${set}/tools.jsonl`,
    queries: `${bench}${set}/dev.jsonl`,
    examples: withExamples ? `${bench}${set}/examples.jsonl` : undefined,
  });
  assert.deepEqual(data.warnings, []);
  return runEvaluation({ documents: data.documents, queries: data.queries });
}

describe('retrieval quality on the bench dev sets', () => {
  it('seal-tools (4,076 tools, multi-intent queries)', async () => {
    const report = await evaluate('seal-tools', false);
    assert.equal(report.n, 700);
    assert.ok(report.recall.get(5)! >= 0.94, `R@5 ${report.recall.get(5)}`);
    assert.ok(report.ndcg10 >= 0.94, `nDCG@10 ${report.ndcg10}`);
    assert.ok(report.completeness.get(10)! >= 0.93, `Comp@10 ${report.completeness.get(10)}`);
    assert.ok(report.mrr >= 0.96, `MRR ${report.mrr}`);
    assert.deepEqual(report.warnings, []);
  });

  it('metatool without examples', async () => {
    const report = await evaluate('metatool', false);
    assert.equal(report.n, 1734);
    assert.ok(report.recall.get(5)! >= 0.71, `R@5 ${report.recall.get(5)}`);
    assert.ok(report.recall.get(1)! >= 0.53, `R@1 ${report.recall.get(1)}`);
  });

  it('metatool with examples (Tool2Vec + examples field)', async () => {
    const report = await evaluate('metatool', true);
    assert.ok(report.recall.get(1)! >= 0.69, `R@1 ${report.recall.get(1)}`);
    assert.ok(report.recall.get(5)! >= 0.86, `R@5 ${report.recall.get(5)}`);
  });
});
