import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { measureConvergence } from './bandit-convergence.ts';

// Seed 001 §7.4 by simulation (the measured numbers are in docs/retrieval.md, "Bandit convergence").
describe('bandit convergence (seed 001 §7.4)', () => {
  const pure = measureConvergence({ runs: 300, interactions: 300, seed: 11 });

  it('plain Thompson sampling converges to within 5 % of the oracle, improving all along', () => {
    assert.notEqual(pure.interactionsToWithin5Percent, null, JSON.stringify(pure));
    assert.ok(pure.ratioAt['300']! >= 0.95, JSON.stringify(pure.ratioAt));
    const ratios = ['10', '50', '100', '300'].map((t) => pure.ratioAt[t]!);
    for (let i = 1; i < ratios.length; i++) assert.ok(ratios[i]! > ratios[i - 1]!, `not improving: ${ratios.join(', ')}`);
    assert.ok(pure.withinAt['300']! > pure.withinAt['10']! + 0.3, JSON.stringify(pure.withinAt));
  });

  it('is slower with the relevance prior when retrieval cannot tell the tools apart (its c pseudo-observations must be outweighed)', () => {
    const prior = measureConvergence({ runs: 300, interactions: 300, seed: 11, relevanceStrength: 8 });
    assert.ok(prior.ratioAt['50']! < pure.ratioAt['50']!, `prior ${prior.ratioAt['50']} vs pure ${pure.ratioAt['50']}`);
  });

  it('is deterministic for a seed', () => {
    assert.deepEqual(measureConvergence({ runs: 20, interactions: 60, seed: 3 }), measureConvergence({ runs: 20, interactions: 60, seed: 3 }));
  });
});
