/**
 * @module retrieval/retrieval-index/query-analysis
 * A request as the scoring passes read it: its texts (the whole request, then its clauses
 * when it asks for several things, see `multi-intent.ts`), each text's weighted terms with
 * the concept lexicon's near-synonyms at a low weight, and whether the clauses partition the
 * request's words (then the whole request's lexical row is the sum of the clause rows).
 */
import { relatedTerms } from '../concepts.ts';
import type { LexicalIndex, WeightedTerm } from '../lexical-index.ts';
import { splitClauses } from '../multi-intent.ts';
import { termWeight, tokenize } from '../tokenizer.ts';
import type { RetrievalSettings } from './settings.ts';

/** A query split into its texts (whole request first, then clauses) with their weighted terms. */
export interface QueryAnalysis {
  texts: string[];
  terms: WeightedTerm[][];
  /** The whole request's terms without concept expansion. */
  ownTerms: WeightedTerm[];
  /** True when the clauses' terms add up to the whole request's (they partition its words). */
  wholeIsSum: boolean;
}

/** Weighted query terms: repeated terms add up; function words count little (tokenizer). */
export function queryTerms(text: string, functionWordWeight: number): WeightedTerm[] {
  return analyseText(text, functionWordWeight).own;
}

/**
 * A text's own weighted terms and, when expanding, the concept lexicon's near-synonyms of
 * its content words (function words are never expanded) that it does not already contain.
 */
export function analyseText(text: string, functionWordWeight: number, expand = false): { own: WeightedTerm[]; related: string[] } {
  const weights = new Map<string, number>();
  const tokens = tokenize(text);
  const stems: string[] = [];
  const content: boolean[] = [];
  for (const token of tokens) {
    const weight = termWeight(token, functionWordWeight);
    weights.set(token.term, (weights.get(token.term) ?? 0) + weight);
    stems.push(token.term);
    content.push(weight === 1);
  }
  const own = [...weights].map(([term, weight]) => ({ term, weight }));
  if (!expand) return { own, related: [] };
  const related = [...relatedTerms(stems, (i) => content[i]!)].filter((term) => !weights.has(term));
  return { own, related };
}

/** The summed weight of each term over several term lists. */
function sumOf(lists: readonly WeightedTerm[][]): Map<string, number> {
  const sum = new Map<string, number>();
  for (const list of lists) for (const { term, weight } of list) sum.set(term, (sum.get(term) ?? 0) + weight);
  return sum;
}

/** True when the clauses' own terms add up, term by term, to the whole request's. */
function clausesPartition(ownLists: readonly WeightedTerm[][]): boolean {
  if (ownLists.length <= 1) return false;
  const sum = sumOf(ownLists.slice(1));
  return (
    sum.size === ownLists[0]!.length &&
    ownLists[0]!.every(({ term, weight }) => Math.abs((sum.get(term) ?? Number.NaN) - weight) <= 1e-9 * Math.max(1, weight))
  );
}

/**
 * Analyses a request. `lexical` is asked for only when concept expansion is on (it needs
 * the catalog's document frequencies), so a lexical-only analysis does not build the index.
 */
export function analyseQuery(query: string, settings: RetrievalSettings, lexical: () => LexicalIndex): QueryAnalysis {
  const clauses = settings.multiIntent ? splitClauses(query) : [query];
  const texts = clauses.length > 1 ? [query, ...clauses] : [query];
  // Own terms first: they decide whether the clauses partition the request.
  const expand = settings.conceptWeight > 0;
  const analysed = texts.map((text) => analyseText(text, settings.functionWordWeight, expand));
  const ownLists = analysed.map((a) => a.own);
  const wholeIsSum = clausesPartition(ownLists);
  let termLists = ownLists;
  if (expand) {
    // Near-synonyms at a low weight, only those the catalog has and not too common (their
    // long postings would cost time for little evidence). When the clauses partition the
    // request, the request's terms are the sum of the clauses' (its row stays their sum).
    const index = lexical();
    const maxDf = Math.max(50, 0.02 * index.size);
    termLists = analysed.map(({ own, related }) => {
      const list = [...own];
      for (const term of related) {
        const df = index.documentFrequency(term);
        if (df > 0 && df <= maxDf) list.push({ term, weight: settings.conceptWeight });
      }
      return list;
    });
    if (wholeIsSum) termLists[0] = [...sumOf(termLists.slice(1))].map(([term, weight]) => ({ term, weight }));
  }
  // Anti-patterns are matched on the request's own words, not on their near-synonyms.
  return { texts, terms: termLists, ownTerms: ownLists[0]!, wholeIsSum };
}
