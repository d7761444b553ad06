/**
 * @module retrieval/retrieval-index/quantised-rows
 * The in-memory tool vectors, quantised (issue #28): each row is int8 codes with one float
 * scale (symmetric, scale = max |x| / 127, code = round(x / scale)), so a 512-d row is 512 bytes
 * plus 4 instead of 2,048. A similarity is the float32 query · int8 row × scale. The error per
 * dimension is at most scale / 2; for a unit row of 512 dimensions that is a cosine error of
 * about 1e-3 at worst and ~1e-4 typically. Quantising a dequantised row gives the same codes
 * and scale back, so a snapshot rebuilt from quantised rows ranks as before. The vectors in the
 * database stay float (this is only the index's copy).
 */

/** The largest code: symmetric, so -127..127 (−128 is never used). */
const maxCode = 127;

/** One quantised vector: `codes` (a view, possibly of a snapshot's matrix) times `scale`. */
export interface QuantisedRow {
  codes: Int8Array;
  scale: number;
}

/** Writes `vector`'s codes at `codes[offset…]` and returns its scale (0 for an all-zero row). */
export function quantiseInto(vector: ArrayLike<number>, codes: Int8Array, offset: number): number {
  let max = 0;
  for (let i = 0; i < vector.length; i++) {
    const magnitude = Math.abs(vector[i]!);
    if (magnitude > max) max = magnitude;
  }
  if (!(max > 0) || !Number.isFinite(max)) {
    codes.fill(0, offset, offset + vector.length);
    return 0;
  }
  const scale = Math.fround(max / maxCode);
  for (let i = 0; i < vector.length; i++) {
    const code = Math.round(vector[i]! / scale);
    codes[offset + i] = code > maxCode ? maxCode : code < -maxCode ? -maxCode : code;
  }
  return scale;
}

/** Quantises one vector into its own codes. */
export function quantise(vector: ArrayLike<number>): QuantisedRow {
  const codes = new Int8Array(vector.length);
  return { codes, scale: quantiseInto(vector, codes, 0) };
}

/** The float vector a quantised row stands for (a new array). */
export function dequantise(row: QuantisedRow): Float32Array {
  const vector = new Float32Array(row.codes.length);
  for (let i = 0; i < vector.length; i++) vector[i] = row.codes[i]! * row.scale;
  return vector;
}

/**
 * The float `vector` · the quantised row at `codes[offset…]`, times `scale`: two accumulators
 * (their order of summation is part of the scores), the scale applied once at the end.
 */
export function quantisedDot(codes: Int8Array, offset: number, scale: number, vector: Float32Array): number {
  const dimensions = vector.length;
  let s0 = 0;
  let s1 = 0;
  let i = 0;
  for (; i + 1 < dimensions; i += 2) {
    s0 += codes[offset + i]! * vector[i]!;
    s1 += codes[offset + i + 1]! * vector[i + 1]!;
  }
  if (i < dimensions) s0 += codes[offset + i]! * vector[i]!;
  return (s0 + s1) * scale;
}
