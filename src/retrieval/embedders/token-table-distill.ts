/**
 * @module retrieval/embedders/token-table-distill
 * Distils the shipped model (USE-Lite) into a static token table, model2vec-style (issue #25):
 * every vocabulary piece is run through the model once, on its own, and its 512-d output
 * becomes that piece's row. `token-table.ts` then embeds a text as the weighted mean of its
 * pieces' rows, which costs a tokenisation and a few thousand multiply-adds instead of a
 * transformer pass.
 *
 * Each piece embedded alone lands near one shared direction (to the model every lone piece
 * looks alike), which swamps what tells pieces apart: the rows' top principal components are
 * removed (Mu & Viswanath 2018, "all-but-the-top"; measured on MetaTool dev, vector-only
 * R@5: none 0.521, 1 0.492, 2 0.527, 5 0.552, 10 0.569, 20 0.557, so 10).
 *
 * Run by `scripts/distill-token-table.mjs`; loads TF.js in this process (a one-off job, not a
 * serving path). The wasm backend computes the same floats on every run, so the file is
 * reproducible byte for byte from the same package version (the script checks it).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { encodeTokenTable } from './token-table-file.ts';
import type { Vocabulary } from './sentencepiece.ts';
import { USE_LITE_PACKAGE, installedUseLiteDir } from './use-lite.ts';

const require = createRequire(import.meta.url);
const dimensions = 512;
/** Principal components removed from the rows (see above). */
export const removedComponents = 10;

interface TfCore {
  loadGraphModel(url: string): Promise<{ executeAsync(inputs: Record<string, unknown>): Promise<{ data(): Promise<Float32Array>; dispose(): void }> }>;
  ready(): Promise<void>;
  tensor2d(values: number[][], shape: [number, number], dtype: 'int32'): { dispose(): void };
  tensor1d(values: number[], dtype: 'int32'): { dispose(): void };
}

/** Embeds vocabulary pieces `ids` one per sentence; resolves to rows in the order given. */
export async function embedPieces(ids: readonly number[], options: { modelDir?: string; batch?: number } = {}): Promise<Float32Array> {
  const modelDir = options.modelDir ?? installedUseLiteDir();
  if (!modelDir) throw new Error(`${USE_LITE_PACKAGE} is not installed`);
  const core = require('@energetic-ai/core') as TfCore;
  const graph = await core.loadGraphModel(`file://${join(modelDir, 'model.json')}`);
  await core.ready();
  const batch = options.batch ?? 200;
  const out = new Float32Array(ids.length * dimensions);
  for (let at = 0; at < ids.length; at += batch) {
    const slice = ids.slice(at, at + batch);
    // One piece per sentence: sentence i holds the single token ids[i].
    const indices = core.tensor2d(slice.map((_, i) => [i, 0]), [slice.length, 2], 'int32');
    const values = core.tensor1d([...slice], 'int32');
    const result = await graph.executeAsync({ indices, values });
    out.set(await result.data(), at * dimensions);
    indices.dispose();
    values.dispose();
    result.dispose();
  }
  return out;
}

/** Distils the installed model into the bytes of a token-table file. */
export async function distillTokenTable(options: { modelDir?: string } = {}): Promise<Buffer> {
  const modelDir = options.modelDir ?? installedUseLiteDir();
  if (!modelDir) throw new Error(`${USE_LITE_PACKAGE} is not installed`);
  const vocabText = readFileSync(join(modelDir, 'vocab.json'));
  const vocabulary = JSON.parse(vocabText.toString('utf8')) as Vocabulary;
  const modelSha = createHash('sha256').update(readFileSync(join(modelDir, 'model.json')));
  const packageJson = JSON.parse(readFileSync(join(modelDir, '..', 'package.json'), 'utf8')) as { version: string; license: string };
  const vectors = await embedPieces(vocabulary.map((_, id) => id), { modelDir });
  removeTopComponents(vectors, vocabulary.length, removedComponents);
  return encodeTokenTable(
    {
      source: {
        package: USE_LITE_PACKAGE,
        version: packageJson.version,
        modelSha256: modelSha.digest('hex'),
        vocabSha256: createHash('sha256').update(vocabText).digest('hex'),
      },
      license: packageJson.license,
      removedComponents,
      dimensions,
      vocabulary,
    },
    vectors,
  );
}

/**
 * Removes the top `count` principal directions (uncentred second moment, over every row but
 * the unknown piece) from every row, in place. Power iteration from a fixed start with
 * deflation: deterministic, so the table is reproducible.
 */
export function removeTopComponents(rows: Float32Array, count: number, components: number): void {
  const directions: Float64Array[] = [];
  for (let c = 0; c < components; c++) {
    let direction = new Float64Array(dimensions).fill(1 / Math.sqrt(dimensions));
    for (let iteration = 0; iteration < 50; iteration++) {
      const next = new Float64Array(dimensions);
      for (let id = 1; id < count; id++) {
        let projection = 0;
        for (let i = 0; i < dimensions; i++) projection += rows[id * dimensions + i]! * direction[i]!;
        for (let i = 0; i < dimensions; i++) next[i]! += projection * rows[id * dimensions + i]!;
      }
      for (const previous of directions) {
        let overlap = 0;
        for (let i = 0; i < dimensions; i++) overlap += next[i]! * previous[i]!;
        for (let i = 0; i < dimensions; i++) next[i]! -= overlap * previous[i]!;
      }
      let norm = 0;
      for (let i = 0; i < dimensions; i++) norm += next[i]! * next[i]!;
      norm = Math.sqrt(norm);
      for (let i = 0; i < dimensions; i++) next[i]! /= norm;
      direction = next;
    }
    directions.push(direction);
  }
  for (let id = 0; id < count; id++) {
    for (const direction of directions) {
      let projection = 0;
      for (let i = 0; i < dimensions; i++) projection += rows[id * dimensions + i]! * direction[i]!;
      for (let i = 0; i < dimensions; i++) rows[id * dimensions + i]! -= projection * direction[i]!;
    }
  }
}
