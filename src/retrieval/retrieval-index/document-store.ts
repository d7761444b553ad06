/**
 * @module retrieval/retrieval-index/document-store
 * The documents the index holds and their tool vectors. Only documents without a given
 * vector of the right size are embedded (Tool2Vec), so an upsert embeds only what changed
 * and a build from persisted vectors embeds nothing. Relevance fails open (DESIGN §3.4,
 * seed 001 §10.1): when the embedder fails, vectors are dropped until the next build and the
 * failure becomes a warning; lexical ranking still works. Vectors are held quantised (int8 codes
 * and a scale per row, `quantised-rows.ts`, issue #28): a float vector is quantised as it comes in
 * and `vectorOf` gives a dequantised copy.
 */
import { QuiverError } from '../../core/errors.ts';
import type { RetrievalDocument } from '../document.ts';
import type { Embedder } from '../embedders/embedder.ts';
import { embedDocuments } from '../tool2vec.ts';
import { dequantise, quantise, type QuantisedRow } from './quantised-rows.ts';
import type { VectorRows } from './snapshot.ts';
import type { BuildOptions } from './types.ts';

/** Documents by id, in insertion order, with their vectors. */
export interface DocumentStore {
  readonly size: number;
  /** True when the embedder works and at least one document has a vector. */
  readonly hasVectors: boolean;
  /** Warnings of the last build and the upserts since. */
  readonly warnings: readonly string[];
  /** Replaces every document; throws `invalid_input` on a duplicate id, before changing anything. */
  replace(documents: readonly RetrievalDocument[], options: BuildOptions): Promise<void>;
  /** Adds or replaces documents, embedding only them. */
  upsert(documents: readonly RetrievalDocument[], options: BuildOptions): Promise<void>;
  /** Removes documents by id; true when any was held. */
  remove(ids: readonly string[]): boolean;
  /** The tool's vector as the index ranks with it: dequantised, a new array each call. */
  vectorOf(id: string): Float32Array | undefined;
  /** The documents in insertion order. */
  list(): RetrievalDocument[];
  /** The vectors to rank with, or undefined when there are none. */
  vectorRows(): VectorRows | undefined;
  /**
   * Holds each vector's codes as a view of `codes` (the snapshot's row-major copy: row i is
   * `documents[i]`, present where `hasVector[i]`), so the index keeps one copy of its vectors,
   * not two (issue #28: 10,000 512-d rows are 5 MB quantised, each also its own small buffer).
   */
  shareRows(documents: readonly RetrievalDocument[], codes: Int8Array, hasVector: Uint8Array, dimensions: number): void;
}

/** Creates an empty store; without an embedder it holds no vectors. */
export function createDocumentStore(embedder: Embedder | undefined, textShare: number): DocumentStore {
  const documents = new Map<string, RetrievalDocument>();
  const vectors = new Map<string, QuantisedRow>();
  let warnings: string[] = [];
  let vectorsEnabled = embedder !== undefined;
  const hasVectors = (): boolean => embedder !== undefined && vectorsEnabled && vectors.size > 0;

  const embedInto = async (batch: readonly RetrievalDocument[], options: BuildOptions): Promise<void> => {
    if (!embedder || !vectorsEnabled) return;
    const missing: RetrievalDocument[] = [];
    for (const document of batch) {
      const given = options.vectors?.get(document.id);
      if (given && given.length === embedder.dimensions) vectors.set(document.id, quantise(given));
      else missing.push(document);
    }
    if (missing.length === 0 || options.embedMissing === false) return;
    try {
      const embedded = await embedDocuments(embedder, missing, { textShare, ...(options.signal ? { signal: options.signal } : {}) });
      missing.forEach((document, i) => vectors.set(document.id, quantise(embedded[i]!)));
    } catch (error) {
      vectorsEnabled = false;
      vectors.clear();
      warnings.push(`embedder ${embedder.modelId} failed, ranking lexically: ${(error as Error).message}`);
    }
  };

  return {
    get size() {
      return documents.size;
    },
    get hasVectors() {
      return hasVectors();
    },
    get warnings() {
      return warnings;
    },
    async replace(list, options) {
      const ids = new Set<string>();
      for (const document of list) {
        if (ids.has(document.id)) throw new QuiverError('invalid_input', `duplicate tool id '${document.id}'`);
        ids.add(document.id);
      }
      documents.clear();
      vectors.clear();
      warnings = [];
      vectorsEnabled = embedder !== undefined;
      for (const document of list) documents.set(document.id, document);
      await embedInto(list, options);
    },
    async upsert(list, options) {
      for (const document of list) {
        documents.set(document.id, document);
        vectors.delete(document.id);
      }
      await embedInto(list, options);
    },
    remove(ids) {
      let changed = false;
      for (const id of ids) {
        changed = documents.delete(id) || changed;
        vectors.delete(id);
      }
      return changed;
    },
    vectorOf: (id) => {
      const row = vectors.get(id);
      return row === undefined ? undefined : dequantise(row);
    },
    list: () => [...documents.values()],
    vectorRows: () => (hasVectors() ? { dimensions: embedder!.dimensions, vectors } : undefined),
    shareRows(list, codes, hasVector, dimensions) {
      list.forEach((document, i) => {
        const row = vectors.get(document.id);
        if (hasVector[i] === 1 && row !== undefined) row.codes = codes.subarray(i * dimensions, (i + 1) * dimensions);
      });
    },
  };
}
