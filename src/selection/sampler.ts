/**
 * @module selection/sampler
 * Beta sampling for Thompson sampling (seed 001 §6.5–6.7): standard normals by the polar
 * Box–Muller method, Gamma(shape) by Marsaglia–Tsang (2000) with the Ahrens–Dieter boost
 * for shape < 1 (Gamma(a) = Gamma(a + 1) · U^(1/a)), and Beta(a, b) = X / (X + Y) with
 * X ~ Gamma(a), Y ~ Gamma(b).
 */
import type { RandomSource } from './random.ts';

/** Samplers bound to one random source. */
export interface Sampler {
  /** A standard normal N(0, 1). */
  normal(): number;
  /** Gamma(shape, 1); shape must be finite and > 0. */
  gamma(shape: number): number;
  /** Beta(alpha, beta); both must be finite and > 0. */
  beta(alpha: number, beta: number): number;
}

function assertShape(name: string, value: number): void {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a finite number > 0 (got ${value})`);
}

/** Creates the samplers over `random` (uniform in [0, 1)). */
export function createSampler(random: RandomSource): Sampler {
  // The polar method yields two independent normals per accepted pair; keep the second.
  let spare: number | undefined;

  // U in (0, 1): Math.random and sfc32 can return exactly 0, which breaks log and 1/a powers.
  const openUniform = (): number => {
    let u = random();
    while (u <= 0) u = random();
    return u;
  };

  function normal(): number {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    for (;;) {
      const u = 2 * random() - 1;
      const v = 2 * random() - 1;
      const s = u * u + v * v;
      if (s >= 1 || s === 0) continue;
      const factor = Math.sqrt((-2 * Math.log(s)) / s);
      spare = v * factor;
      return u * factor;
    }
  }

  function gammaAtLeastOne(shape: number): number {
    // Marsaglia & Tsang, "A Simple Method for Generating Gamma Variables" (2000).
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      const x = normal();
      let v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const u = openUniform();
      const x2 = x * x;
      if (u < 1 - 0.0331 * x2 * x2) return d * v;
      if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v;
    }
  }

  function gamma(shape: number): number {
    assertShape('shape', shape);
    if (shape >= 1) return gammaAtLeastOne(shape);
    // Boost (seed 001 §6.6): Gamma(a) = Gamma(a + 1) · U^(1/a) for a < 1.
    return gammaAtLeastOne(shape + 1) * Math.pow(openUniform(), 1 / shape);
  }

  function beta(alpha: number, betaParam: number): number {
    assertShape('alpha', alpha);
    assertShape('beta', betaParam);
    const x = gamma(alpha);
    const y = gamma(betaParam);
    const sum = x + y;
    // Both draws can underflow to 0 for tiny shapes; the mean is the only sensible answer then.
    if (!(sum > 0)) return alpha / (alpha + betaParam);
    return x / sum;
  }

  return { normal, gamma, beta };
}
