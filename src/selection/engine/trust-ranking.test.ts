import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyTrustFactors } from './trust-ranking.ts';

describe('trust in the ranking', () => {
  const plugins: Record<string, string> = { a: 'trusted', b: 'shaky', c: 'trusted', d: 'odd' };
  const factors: Record<string, number> = { trusted: 1, shaky: 0.7, odd: 5 };
  const rank = (ranked: Array<{ id: string; score: number }>) => applyTrustFactors(ranked, (id) => plugins[id], (plugin) => factors[plugin] ?? 1).map((hit) => hit.id);

  it('puts a low-trust tool below an equally relevant high-trust one', () => {
    assert.deepEqual(rank([{ id: 'b', score: 0.9 }, { id: 'a', score: 0.9 }]), ['a', 'b']);
  });
  it('never raises a tool: factors above 1 count as 1, and order among equals is kept', () => {
    assert.deepEqual(rank([{ id: 'a', score: 0.5 }, { id: 'd', score: 0.5 }, { id: 'c', score: 0.5 }]), ['a', 'd', 'c']);
    assert.deepEqual(rank([{ id: 'a', score: 0.6 }, { id: 'd', score: 0.5 }]), ['a', 'd']);
  });
  it('keeps a much more relevant low-trust tool ahead (a penalty, not a filter)', () => {
    assert.deepEqual(rank([{ id: 'b', score: 0.9 }, { id: 'a', score: 0.4 }]), ['b', 'a']);
  });
});
