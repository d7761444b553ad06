/**
 * DESIGN §6: "plugin processes after 1,000 calls across 50 sessions to 5 plugins: ≤ 5 (+ pool
 * size) alive, none orphaned" — measured with real processes through the bench function the
 * CLI reports.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { benchCallOverhead, benchProcessBound } from './runtime.ts';

describe('process bound', () => {
  for (const poolSize of [1, 2]) {
    it(`50 sessions × 1,000 calls × 5 plugins keep ≤ 5 × ${poolSize} processes and leave none after close`, async () => {
      const result = await benchProcessBound({ calls: 1_000, sessions: 50, plugins: 5, poolSize });
      assert.equal(result.failedCalls, 0);
      assert.ok(result.maxAlive <= 5 * poolSize, `max alive ${result.maxAlive}`);
      assert.ok(result.aliveAtEnd <= 5 * poolSize);
      assert.ok(result.aliveAtEnd >= 5, 'every plugin was started');
      assert.equal(result.orphansAfterClose, 0);
    });
  }

  it('benchCallOverhead measures both paths', async () => {
    const result = await benchCallOverhead({ samples: 50, warmup: 10 });
    assert.equal(result.samples, 50);
    for (const value of [result.directP50Ms, result.supervisorP50Ms, result.directP99Ms, result.supervisorP99Ms]) assert.ok(Number.isFinite(value) && value > 0);
  });
});
