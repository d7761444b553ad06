import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { benchBandit, benchSelectionLatency, benchTokenSavings } from './selection.ts';

// Smoke tests: the bench functions run and report sane shapes. Speed targets are measured by
// `quiver bench`, never asserted here.
describe('selection bench functions', () => {
  it('measures warm latency without touching the database', async () => {
    const [result] = await benchSelectionLatency({ sizes: [300], selections: 60 });
    assert.equal(result!.tools, 300);
    assert.equal(result!.warmDatabaseQueries, 0);
    assert.ok(result!.p50Ms > 0 && result!.p99Ms >= result!.p50Ms && result!.throughputPerSec > 0);
    assert.ok(Number.isFinite(result!.cpuThroughputPerSec) && result!.cpuThroughputPerSec > 0);
  });

  it('reports token savings per provider', async () => {
    const result = await benchTokenSavings({ toolCount: 150, queries: 10 });
    assert.equal(result.tools, 150);
    for (const provider of ['openai', 'anthropic', 'gemini', 'mcp']) {
      const entry = result.providers[provider]!;
      assert.ok(entry.catalog > entry.averageSent && entry.savedPercent > 80, `${provider}: ${JSON.stringify(entry)}`);
    }
  });

  it('simulates the bandit and reports regret and convergence', () => {
    const { scenarios } = benchBandit({ runs: 2, interactions: 200 });
    assert.equal(scenarios.length, 3);
    for (const scenario of scenarios) {
      // Learning means the regret of the last 100 interactions is well below the average regret
      // per interaction over the whole run (which includes the exploring start).
      const averageRegret = scenario.cumulativeRegret / 200;
      assert.ok(scenario.finalRegretPerInteraction < averageRegret, `${scenario.scenario}: ${JSON.stringify(scenario)}`);
      assert.ok(scenario.converged > 0 && scenario.converged <= 1, `${scenario.scenario} converged in ${scenario.converged} of the runs`);
    }
  });
});
