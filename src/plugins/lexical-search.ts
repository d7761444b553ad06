/**
 * @module plugins/lexical-search
 * Ranking a small set of records (marketplace entries, intelligence documents) against a
 * query with the retrieval layer's BM25F index and tokenizer (DESIGN §3.3), so "search"
 * means the same everywhere in Quiver: stemmed terms, fielded weights, function words
 * counting little. Sets here are small (hundreds); the index is built per search.
 */
import { buildLexicalIndex, type FieldParameters } from '../retrieval/lexical-index.ts';
import { terms, termWeight, tokenize } from '../retrieval/tokenizer.ts';

/** One searchable record: its fields' text in the order of `fields`. */
export interface SearchableRecord<T> {
  item: T;
  fields: readonly string[];
}

/** A ranked hit. */
export interface SearchHit<T> {
  item: T;
  score: number;
}

/** Ranks `records` for `query`; only records matching at least one query term are returned. */
export function lexicalSearch<T>(
  records: readonly SearchableRecord<T>[],
  fields: readonly FieldParameters[],
  query: string,
  limit: number,
): SearchHit<T>[] {
  const queryTerms = new Map<string, number>();
  for (const token of tokenize(query)) {
    queryTerms.set(token.term, Math.max(queryTerms.get(token.term) ?? 0, termWeight(token, 0.1)));
  }
  if (queryTerms.size === 0 || records.length === 0) return [];
  // The tokenizer splits `io.github.user/weather-server` and `read_file` into words.
  const index = buildLexicalIndex(
    records.map((record) => record.fields.map((text) => terms(text))),
    fields,
    1.2,
  );
  const scores = new Float32Array(index.size);
  index.accumulate(
    [...queryTerms].map(([term, weight]) => ({ term, weight })),
    scores,
  );
  const hits: SearchHit<T>[] = [];
  scores.forEach((score, position) => {
    if (score > 0) hits.push({ item: records[position]!.item, score });
  });
  return hits.sort((a, b) => b.score - a.score).slice(0, Math.max(0, limit));
}
