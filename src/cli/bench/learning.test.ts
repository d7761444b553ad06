import { it } from 'node:test';
import assert from 'node:assert/strict';
import { benchLearning } from './learning.ts';

it('the learning bench measures both engines, learns from the stream and times a taught query to rank 1', { timeout: 300_000 }, async () => {
  const result = await benchLearning({ rounds: 40, samples: 2 });
  assert.ok(result.tools > 4_000);
  assert.equal(result.cost.selections, 40);
  for (const side of [result.cost.withoutLearning, result.cost.whileLearning]) assert.ok(side.p50Ms > 0 && side.p99Ms >= side.p50Ms, JSON.stringify(side));
  assert.ok(result.cost.learned > 0 && result.cost.examplesHeld === result.cost.learned, JSON.stringify(result.cost));
  assert.equal(result.timeToRankOne.taught, 2, JSON.stringify(result.timeToRankOne));
  assert.ok(result.timeToRankOne.p50Ms > 0 && result.timeToRankOne.maxMs >= result.timeToRankOne.p50Ms);
});
