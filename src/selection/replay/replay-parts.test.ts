import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSeededRandom } from '../random.ts';
import { simulateOutcome } from './simulated-outcome.ts';
import { scoreInteraction, summarizeWindow, windowsOf } from './windows.ts';
import { shuffled } from './replay.ts';

/** A random source that replays fixed draws (and fails when asked for more). */
function draws(...values: number[]): () => number {
  return () => {
    const next = values.shift();
    if (next === undefined) throw new Error('unexpected draw');
    return next;
  };
}

describe('replay: simulated outcomes', () => {
  it('calls the gold tool when it is offered in the top K, nothing otherwise', () => {
    const noNoise = { k: 3, noise: 0, random: draws() };
    assert.deepEqual(simulateOutcome(['a', 'g', 'b'], [['g']], noNoise), { called: ['g'], success: true, noisy: false });
    // Offered, but below K: not called.
    assert.deepEqual(simulateOutcome(['a', 'b', 'c', 'g'], [['g']], noNoise), { called: [], success: false, noisy: false });
    assert.deepEqual(simulateOutcome([], [['g']], noNoise), { called: [], success: false, noisy: false });
  });

  it('calls each offered gold item once (two-tool requests), any member of an item', () => {
    const options = { k: 5, noise: 0, random: draws() };
    assert.deepEqual(simulateOutcome(['x', 'g2', 'y', 'g1'], [['g1'], ['g2']], options).called, ['g1', 'g2']);
    assert.deepEqual(simulateOutcome(['x', 'alt', 'main'], [['main', 'alt']], options).called, ['alt'], 'the first offered member of the item');
    assert.deepEqual(simulateOutcome(['x', 'g2'], [['g1'], ['g2']], options).called, ['g2'], 'one of two offered');
  });

  it('with noise P, credits one wrong offered tool when the draw is below P', () => {
    // Draw 0.1 < 0.25 fires; 0.6 picks the second of the two wrong tools (a, b).
    assert.deepEqual(simulateOutcome(['a', 'g', 'b'], [['g']], { k: 3, noise: 0.25, random: draws(0.1, 0.6) }), { called: ['b'], success: true, noisy: true });
    // Draw 0.3 ≥ 0.25: the rule applies.
    assert.deepEqual(simulateOutcome(['a', 'g', 'b'], [['g']], { k: 3, noise: 0.25, random: draws(0.3) }), { called: ['g'], success: true, noisy: false });
    // Noise also fires when the gold tool was not offered: the model takes a neighbour.
    assert.deepEqual(simulateOutcome(['a', 'b'], [['g']], { k: 3, noise: 0.25, random: draws(0.2, 0) }), { called: ['a'], success: true, noisy: true });
    // Nothing wrong to credit: the rule applies.
    assert.deepEqual(simulateOutcome(['g'], [['g']], { k: 3, noise: 0.25, random: draws(0.1) }), { called: ['g'], success: true, noisy: false });
  });

  it('fires noise in about a share P of interactions with a seeded source', () => {
    const random = createSeededRandom(3);
    let noisy = 0;
    for (let i = 0; i < 4_000; i++) if (simulateOutcome(['a', 'g', 'b'], [['g']], { k: 3, noise: 0.25, random }).noisy) noisy++;
    assert.ok(Math.abs(noisy / 4_000 - 0.25) < 0.03, `noise share ${noisy / 4_000}`);
  });
});

describe('replay: windows', () => {
  const hit = (rank: number | null) => scoreInteraction(rank === null ? ['x', 'y'] : [...Array.from({ length: rank - 1 }, (_, i) => `x${i}`), 'g'], [['g']], { calledGold: rank !== null, noisy: false });

  it('scores an interaction on the offered ranking', () => {
    const second = hit(2);
    assert.equal(second.recall.get(1), 0);
    assert.equal(second.recall.get(3), 1);
    assert.equal(second.reciprocalRank, 0.5);
    assert.equal(hit(null).reciprocalRank, 0);
  });

  it('averages windows of N in stream order, the last one shorter', () => {
    const scored = [hit(1), hit(2), hit(null), hit(1), hit(1)];
    const windows = windowsOf(scored, 2);
    assert.deepEqual(windows.map((w) => [w.from, w.to, w.n]), [[1, 2, 2], [3, 4, 2], [5, 5, 1]]);
    assert.equal(windows[0]!['recall@1'], 0.5);
    assert.equal(windows[0]!.mrr, 0.75);
    assert.equal(windows[1]!['recall@5'], 0.5);
    assert.equal(windows[1]!.called, 0.5);
    assert.equal(windows[2]!['recall@1'], 1);
    assert.deepEqual(summarizeWindow(scored, 1).n, 5);
    assert.equal(summarizeWindow(scored, 1)['recall@1'], 0.6);
  });

  it('shuffles reproducibly with a seed and keeps every item', () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const a = shuffled(items, createSeededRandom(9));
    assert.deepEqual(a, shuffled(items, createSeededRandom(9)));
    assert.notDeepEqual(a, items);
    assert.deepEqual([...a].sort((x, y) => x - y), items);
  });
});
