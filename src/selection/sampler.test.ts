import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSampler } from './sampler.ts';
import { createSeededRandom } from './random.ts';

function moments(draw: () => number, n: number): { mean: number; variance: number } {
  let sum = 0;
  let sumSquares = 0;
  for (let i = 0; i < n; i++) {
    const x = draw();
    sum += x;
    sumSquares += x * x;
  }
  const mean = sum / n;
  return { mean, variance: sumSquares / n - mean * mean };
}

describe('seeded random', () => {
  it('repeats the same sequence for the same seed and differs across seeds', () => {
    const a = createSeededRandom(42);
    const b = createSeededRandom(42);
    const c = createSeededRandom(43);
    const seqA = Array.from({ length: 20 }, () => a());
    const seqB = Array.from({ length: 20 }, () => b());
    const seqC = Array.from({ length: 20 }, () => c());
    assert.deepEqual(seqA, seqB);
    assert.notDeepEqual(seqA, seqC);
    for (const x of seqA) assert.ok(x >= 0 && x < 1);
  });

  it('is uniform: mean 1/2, variance 1/12', () => {
    const { mean, variance } = moments(createSeededRandom(7), 200_000);
    assert.ok(Math.abs(mean - 0.5) < 0.005, `mean ${mean}`);
    assert.ok(Math.abs(variance - 1 / 12) < 0.002, `variance ${variance}`);
  });
});

describe('sampler', () => {
  it('draws standard normals (polar Box–Muller)', () => {
    const sampler = createSampler(createSeededRandom(1));
    const { mean, variance } = moments(() => sampler.normal(), 200_000);
    assert.ok(Math.abs(mean) < 0.01, `mean ${mean}`);
    assert.ok(Math.abs(variance - 1) < 0.02, `variance ${variance}`);
  });

  for (const shape of [0.3, 0.9, 1, 2.5, 30]) {
    it(`draws Gamma(${shape}) with mean and variance equal to the shape`, () => {
      const sampler = createSampler(createSeededRandom(11));
      const { mean, variance } = moments(() => sampler.gamma(shape), 200_000);
      assert.ok(Math.abs(mean - shape) / shape < 0.02, `mean ${mean} vs ${shape}`);
      assert.ok(Math.abs(variance - shape) / shape < 0.05, `variance ${variance} vs ${shape}`);
    });
  }

  const betaCases: Array<[number, number]> = [
    [0.5, 0.5],
    [0.2, 3],
    [1, 1],
    [2, 5],
    [41, 11],
    [801, 201],
  ];
  for (const [a, b] of betaCases) {
    it(`draws Beta(${a}, ${b}) with the right mean and variance`, () => {
      const sampler = createSampler(createSeededRandom(2024));
      const n = 100_000;
      const { mean, variance } = moments(() => sampler.beta(a, b), n);
      const expectedMean = a / (a + b);
      const expectedVariance = (a * b) / ((a + b) ** 2 * (a + b + 1));
      // Tolerances: about 5 standard errors of the sample mean, 5 % relative for the variance.
      assert.ok(Math.abs(mean - expectedMean) < 5 * Math.sqrt(expectedVariance / n) + 1e-4, `mean ${mean} vs ${expectedMean}`);
      assert.ok(Math.abs(variance - expectedVariance) / expectedVariance < 0.05, `variance ${variance} vs ${expectedVariance}`);
    });
  }

  it('keeps every Beta draw inside [0, 1], even for tiny shapes', () => {
    const sampler = createSampler(createSeededRandom(3));
    for (let i = 0; i < 20_000; i++) {
      const x = sampler.beta(0.01, 0.02);
      assert.ok(x >= 0 && x <= 1 && Number.isFinite(x), `draw ${x}`);
    }
  });

  it('is reproducible with a seed', () => {
    const first = createSampler(createSeededRandom(99));
    const second = createSampler(createSeededRandom(99));
    const a = Array.from({ length: 50 }, () => first.beta(2, 3));
    const b = Array.from({ length: 50 }, () => second.beta(2, 3));
    assert.deepEqual(a, b);
  });

  it('rejects non-positive and non-finite shapes', () => {
    const sampler = createSampler(createSeededRandom(1));
    assert.throws(() => sampler.gamma(0), RangeError);
    assert.throws(() => sampler.gamma(-1), RangeError);
    assert.throws(() => sampler.beta(1, Number.NaN), RangeError);
    assert.throws(() => sampler.beta(Number.POSITIVE_INFINITY, 1), RangeError);
  });
});
