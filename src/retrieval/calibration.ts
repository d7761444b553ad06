/**
 * @module retrieval/calibration
 * The similarity floor of an embedder, computed from its own distribution (issue #25): the
 * cosine above which two requests are taken to want the same tool. A fixed floor suits no
 * embedder: with the hashed one few paraphrases of one tool reach 0.35, with USE-Lite many
 * requests for different tools exceed it. The floor is the (1 − falseMatchRate) quantile of
 * the similarities of requests for *different* tools, measured on public labelled requests
 * (MetaTool's example queries, shipped in bench/data), so at most `falseMatchRate` of
 * unrelated pairs pass it; the share of same-tool pairs above it is reported beside it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dot, type Embedder } from './embedders/embedder.ts';

/** What a calibration measured. */
export interface FloorCalibration {
  model: string;
  floor: number;
  falseMatchRate: number;
  /** Share of same-tool pairs above the floor (how much a learned example can reach). */
  sameToolAbove: number;
  /** Share of different-tool pairs above the floor (≈ falseMatchRate). */
  differentToolAbove: number;
  samePairs: number;
  differentPairs: number;
  /** Medians of both distributions. */
  sameMedian: number;
  differentMedian: number;
}

/** Requests grouped by the tool they want. */
export type RequestGroups = ReadonlyArray<readonly string[]>;

const calibrationFile = new URL('../../bench/data/metatool/examples.jsonl', import.meta.url);

/** The shipped public calibration requests (MetaTool example queries, MIT), grouped by tool. */
export function shippedCalibrationGroups(file: URL = calibrationFile): string[][] {
  const groups = new Map<string, string[]>();
  for (const line of readFileSync(fileURLToPath(file), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as { tool_id: string; query: string };
    const list = groups.get(row.tool_id) ?? [];
    list.push(row.query);
    groups.set(row.tool_id, list);
  }
  return [...groups.keys()].sort().map((id) => groups.get(id)!);
}

const quantile = (sorted: readonly number[], q: number): number => {
  if (sorted.length === 0) return 0;
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[at]!;
};

/**
 * Computes `embedder`'s floor from `groups` (the first `perGroup` requests of the first
 * `maxGroups` groups with at least two, in their given order: deterministic).
 */
export async function calibrateFloor(
  embedder: Embedder,
  groups: RequestGroups,
  options: { falseMatchRate?: number; perGroup?: number; maxGroups?: number } = {},
): Promise<FloorCalibration> {
  const falseMatchRate = options.falseMatchRate ?? 0.05;
  const perGroup = options.perGroup ?? 4;
  const chosen = groups.filter((group) => group.length >= 2).slice(0, options.maxGroups ?? 80).map((group) => group.slice(0, perGroup));
  const texts = chosen.flat();
  const owner = chosen.flatMap((group, g) => group.map(() => g));
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += embedder.maxBatchSize) vectors.push(...(await embedder.embed(texts.slice(start, start + embedder.maxBatchSize))));
  const same: number[] = [];
  const different: number[] = [];
  for (let i = 0; i < vectors.length; i++) {
    for (let j = i + 1; j < vectors.length; j++) (owner[i] === owner[j] ? same : different).push(dot(vectors[i]!, vectors[j]!));
  }
  same.sort((a, b) => a - b);
  different.sort((a, b) => a - b);
  const floor = quantile(different, 1 - falseMatchRate);
  const above = (values: readonly number[]) => (values.length === 0 ? 0 : values.filter((value) => value > floor).length / values.length);
  return {
    model: embedder.modelId,
    floor,
    falseMatchRate,
    sameToolAbove: above(same),
    differentToolAbove: above(different),
    samePairs: same.length,
    differentPairs: different.length,
    sameMedian: quantile(same, 0.5),
    differentMedian: quantile(different, 0.5),
  };
}
