/**
 * @module retrieval/lexical-index
 * BM25F over fielded text (Robertson & Zaragoza, "The Probabilistic Relevance Framework:
 * BM25 and Beyond", 2009, §3.5): each field's term frequency is length-normalised with its
 * own b and weighted, the weighted sum saturates once with k1, and IDF is applied once per
 * query term. Saturated term weights are computed at build time, so a query is a walk
 * over compressed postings (CSR layout in typed arrays) adding into one score array.
 */

/** Per-field BM25F parameters. */
export interface FieldParameters {
  /** How much one occurrence in this field counts relative to the description. */
  weight: number;
  /** Length normalisation strength in [0, 1]. */
  b: number;
}

/** A query term and how much it counts. */
export interface WeightedTerm {
  term: string;
  weight: number;
}

/** An immutable BM25F index over documents 0..size-1. */
export interface LexicalIndex {
  readonly size: number;
  /** Inverse document frequency of a term (0 when unknown). */
  idf(term: string): number;
  /** Number of documents containing the term. */
  documentFrequency(term: string): number;
  /** The BM25F pseudo-frequency of a term in a document (the weighted, length-normalised sum over fields before saturation; 0 when absent). */
  pseudoFrequency(term: string, document: number): number;
  /** Average length of field f over the documents (the length normalisation's reference). */
  averageFieldLength(field: number): number;
  /** The saturation constant. */
  readonly k1: number;
  /**
   * Adds the BM25F score of `query` for every document into `scores` (length `size`).
   * Returns how many postings were visited.
   */
  accumulate(query: readonly WeightedTerm[], scores: Float32Array): number;
  /**
   * Scores several queries in one walk over the postings: query q's scores are added into
   * `scores[q·size … (q+1)·size)`. A term shared by several queries (a clause and the whole
   * request) has its postings read once. Returns how many postings were visited.
   */
  accumulateRows(queries: readonly (readonly WeightedTerm[])[], scores: Float32Array): number;
}

/** Builds a BM25F index. `documents[i][f]` are the terms of field f of document i. */
export function buildLexicalIndex(
  documents: readonly (readonly (readonly string[])[])[],
  fields: readonly FieldParameters[],
  k1: number,
): LexicalIndex {
  const size = documents.length;
  const fieldCount = fields.length;
  const averageLength = new Float64Array(fieldCount);
  for (const document of documents) {
    for (let f = 0; f < fieldCount; f++) averageLength[f]! += document[f]?.length ?? 0;
  }
  for (let f = 0; f < fieldCount; f++) averageLength[f] = size === 0 ? 1 : Math.max(averageLength[f]! / size, 1e-9);

  const termIds = new Map<string, number>();
  const postingTerm: number[] = [];
  const postingDoc: number[] = [];
  const postingValue: number[] = [];
  const pseudoFrequency = new Map<number, number>();

  for (let d = 0; d < size; d++) {
    const document = documents[d]!;
    pseudoFrequency.clear();
    for (let f = 0; f < fieldCount; f++) {
      const fieldTerms = document[f];
      if (!fieldTerms || fieldTerms.length === 0) continue;
      const { weight, b } = fields[f]!;
      if (weight === 0) continue;
      const norm = 1 - b + (b * fieldTerms.length) / averageLength[f]!;
      const increment = weight / norm;
      for (const term of fieldTerms) {
        let id = termIds.get(term);
        if (id === undefined) {
          id = termIds.size;
          termIds.set(term, id);
        }
        pseudoFrequency.set(id, (pseudoFrequency.get(id) ?? 0) + increment);
      }
    }
    for (const [id, tf] of pseudoFrequency) {
      postingTerm.push(id);
      postingDoc.push(d);
      postingValue.push((tf * (k1 + 1)) / (tf + k1));
    }
  }

  // Counting sort of postings by term into CSR arrays.
  const termCount = termIds.size;
  const offsets = new Int32Array(termCount + 1);
  for (const id of postingTerm) offsets[id + 1]!++;
  for (let t = 0; t < termCount; t++) offsets[t + 1]! += offsets[t]!;
  const cursor = offsets.slice(0, termCount);
  const docs = new Int32Array(postingTerm.length);
  const values = new Float32Array(postingTerm.length);
  for (let p = 0; p < postingTerm.length; p++) {
    const slot = cursor[postingTerm[p]!]!++;
    docs[slot] = postingDoc[p]!;
    values[slot] = postingValue[p]!;
  }
  const idfs = new Float32Array(termCount);
  for (let t = 0; t < termCount; t++) {
    const df = offsets[t + 1]! - offsets[t]!;
    idfs[t] = Math.log(1 + (size - df + 0.5) / (df + 0.5));
  }

  return {
    size,
    k1,
    averageFieldLength: (field) => averageLength[field] ?? 1,
    pseudoFrequency(term, document) {
      const id = termIds.get(term);
      if (id === undefined) return 0;
      // A term's postings are in document order (the counting sort is stable): binary search.
      let low = offsets[id]!;
      let high = offsets[id + 1]! - 1;
      while (low <= high) {
        const middle = (low + high) >> 1;
        const at = docs[middle]!;
        if (at === document) {
          // Invert the saturation v = tf (k1 + 1) / (tf + k1).
          const value = values[middle]!;
          return value >= k1 + 1 ? Number.POSITIVE_INFINITY : (value * k1) / (k1 + 1 - value);
        }
        if (at < document) low = middle + 1;
        else high = middle - 1;
      }
      return 0;
    },
    idf(term) {
      const id = termIds.get(term);
      return id === undefined ? 0 : idfs[id]!;
    },
    documentFrequency(term) {
      const id = termIds.get(term);
      return id === undefined ? 0 : offsets[id + 1]! - offsets[id]!;
    },
    accumulate(query, scores) {
      let visited = 0;
      for (const { term, weight } of query) {
        const id = termIds.get(term);
        if (id === undefined || weight === 0) continue;
        const factor = idfs[id]! * weight;
        const end = offsets[id + 1]!;
        for (let p = offsets[id]!; p < end; p++) scores[docs[p]!]! += factor * values[p]!;
        visited += end - offsets[id]!;
      }
      return visited;
    },
    accumulateRows(queries, scores) {
      // term id → the rows it scores in and its factor there (idf × query weight).
      const rowsOf = new Map<number, number[]>();
      for (let q = 0; q < queries.length; q++) {
        for (const { term, weight } of queries[q]!) {
          const id = termIds.get(term);
          if (id === undefined || weight === 0) continue;
          const list = rowsOf.get(id);
          const entry = [q * size, idfs[id]! * weight];
          if (list) list.push(...entry);
          else rowsOf.set(id, entry);
        }
      }
      let visited = 0;
      for (const [id, list] of rowsOf) {
        const start = offsets[id]!;
        const end = offsets[id + 1]!;
        visited += end - start;
        if (list.length === 2) {
          const base = list[0]!;
          const factor = list[1]!;
          for (let p = start; p < end; p++) scores[base + docs[p]!]! += factor * values[p]!;
          continue;
        }
        for (let p = start; p < end; p++) {
          const d = docs[p]!;
          const value = values[p]!;
          for (let r = 0; r < list.length; r += 2) scores[list[r]! + d]! += list[r + 1]! * value;
        }
      }
      return visited;
    },
  };
}
