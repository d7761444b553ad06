/**
 * @module selection/random
 * Uniform random numbers for the bandit. Production uses `Math.random`; tests and the
 * bandit benchmark pass a seed so every draw is reproducible (DESIGN §3.4 "seedable RNG").
 */

/** A source of uniform numbers in [0, 1). */
export type RandomSource = () => number;

/**
 * A seeded generator (sfc32, Chris Doty-Humphrey's "small fast counting" generator; passes
 * PractRand to 2^42 bytes). The 32-bit seed is spread over the state by splitmix32.
 */
export function createSeededRandom(seed: number): RandomSource {
  let s = seed >>> 0;
  const splitmix = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  // Discard the first outputs: they still carry the seed's structure.
  for (let i = 0; i < 12; i++) next();
  return next;
}
