/** The gateway benchmarks run end to end and report sane, complete figures. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchGatewayOverhead, benchSessionTokens } from './gateway-overhead.ts';

test('benchGatewayOverhead measures direct and gateway calls over real processes', async () => {
  const result = await benchGatewayOverhead({ iterations: 20, warmup: 5 });
  assert.equal(result.iterations, 20);
  for (const key of ['directP50Ms', 'directP99Ms', 'gatewayP50Ms', 'gatewayP99Ms'] as const) assert.ok(result[key] > 0, key);
  assert.ok(Number.isFinite(result.addedP50Ms));
});

test('benchSessionTokens compares search and all mode on >= 150 real tools', async () => {
  const result = await benchSessionTokens();
  assert.ok(result.catalog.tools >= 150);
  assert.ok(result.searchMode.initialTokens < result.allModeTokens / 10);
  assert.equal(result.searchMode.afterEachSearchTokens.length, 3);
  assert.ok(result.savedFraction > 0.5 && result.savedFraction < 1);
});
