/**
 * @module retrieval/embedders/token-table
 * The fast path of the shipped model (issue #25): a static token table distilled from
 * USE-Lite (`token-table-distill.ts`, model2vec-style; Tulkens & van Dongen 2024), shipped as
 * `models/use-lite-token-table.qtt` (4.3 MB, Apache-2.0 like the weights it came from).
 * A text is split by the model's own tokenizer, and its vector is the weighted mean of its
 * pieces' rows, L2-normalised. No TF.js, no worker: a query costs a tokenisation and
 * ~20 × 512 multiply-adds (well under a millisecond), so it runs inline on the request.
 *
 * Weights are SIF-like (Arora et al. 2017): a / (a + p(piece)), with p the piece's unigram
 * probability from the tokenizer's own vocabulary scores, so "▁the" counts little and a rare
 * piece fully (a = 1e-4 and 1e-2 measured no better than 1e-3 on MetaTool dev). The rows' shared
 * directions were removed when the table was distilled.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { QuiverError } from '../../core/errors.ts';
import { normalizeInPlace, type Embedder } from './embedder.ts';
import { createPieceTokenizer } from './sentencepiece.ts';
import { decodeTokenTable, type TokenTable } from './token-table-file.ts';

/** Up to this many texts is a request (the whole query and its clauses), embedded at once. */
const requestTexts = 8;
/** Texts embedded between two yields to the event loop in a catalog batch. */
const sliceTexts = 8;

/** Version of the shipped table's rows (part of the model id). */
const tableVersion = 1;

/** The table that ships in the repository and the package. */
export const shippedTokenTablePath = fileURLToPath(new URL('../../../models/use-lite-token-table.qtt', import.meta.url));

/** Options of `createTokenTableEmbedder`. */
export interface TokenTableEmbedderOptions {
  /** Table file (default: the shipped one). */
  path?: string;
  /** SIF smoothing a: a piece of probability p weighs a / (a + p) (default 1e-3). */
  sifA?: number;
}

/** The token-table embedder; its load is synchronous and happens on the first embed. */
export interface TokenTableEmbedder extends Embedder {
  /** Loads the table now; throws `embedder_unavailable` when it cannot. */
  load(): void;
}

interface Loaded {
  table: TokenTable;
  weights: Float32Array;
  encode(text: string): number[];
}

/** Creates the embedder. A missing or broken table is reported by `embed` (callers fall back). */
export function createTokenTableEmbedder(options: TokenTableEmbedderOptions = {}): TokenTableEmbedder {
  const path = options.path ?? shippedTokenTablePath;
  const sifA = options.sifA ?? 1e-3;
  let loaded: Loaded | undefined;
  let failure: QuiverError | undefined;
  // Stored vectors are keyed by this id: bump `tableVersion` whenever the shipped table is
  // regenerated with different rows (scripts/distill-token-table.mjs --check says whether it is).
  const modelId = `use-lite-table:v${tableVersion}:a${sifA}`;

  const load = (): Loaded => {
    if (loaded) return loaded;
    if (failure) throw failure;
    try {
      const table = decodeTokenTable(readFileSync(path));
      const { vocabSize, dimensions, vocabulary } = table.header;
      if (dimensions !== 512) throw new QuiverError('embedder_unavailable', `token table has ${dimensions} dimensions, expected 512`, { kind: 'operational' });
      const weights = new Float32Array(vocabSize);
      // Id 0 is "unknown": it says nothing about meaning.
      for (let id = 1; id < vocabSize; id++) weights[id] = sifA / (sifA + Math.exp(vocabulary[id]![1]));
      const tokenizer = createPieceTokenizer(vocabulary);
      loaded = { table, weights, encode: (text) => tokenizer.encode(text) };
      return loaded;
    } catch (error) {
      failure = error instanceof QuiverError
        ? error
        : new QuiverError('embedder_unavailable', `token table cannot load: ${(error as Error).message}`, { kind: 'operational', cause: error });
      throw failure;
    }
  };

  const embedOne = (state: Loaded, text: string, dimensions: number): Float32Array => {
    const vector = new Float32Array(dimensions);
    const { rows, scales } = state.table;
    for (const id of state.encode(text)) {
      const weight = state.weights[id]!;
      if (weight === 0) continue;
      const scale = weight * scales[id]!;
      const base = id * dimensions;
      for (let i = 0; i < dimensions; i++) vector[i]! += scale * rows[base + i]!;
    }
    return normalizeInPlace(vector);
  };

  return {
    specificationVersion: 'v1',
    provider: 'use-lite-table',
    modelId,
    dimensions: 512,
    maxBatchSize: 1024,
    load: () => void load(),
    async embed(texts) {
      const state = load();
      const { dimensions } = state.table.header;
      // A request's few texts are embedded at once. A catalog batch runs on the same event loop
      // as searches, so it yields between slices: a search waits for one slice (a few ms), not
      // for the batch (measured before: selection p99 5.9 s while 1,000 tools were embedded).
      if (texts.length <= requestTexts) return texts.map((text) => embedOne(state, text, dimensions));
      const vectors: Float32Array[] = [];
      for (let at = 0; at < texts.length; at += sliceTexts) {
        if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        for (const text of texts.slice(at, at + sliceTexts)) vectors.push(embedOne(state, text, dimensions));
      }
      return vectors;
    },
  };
}
