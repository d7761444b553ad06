/**
 * @module retrieval/retrieval-index/anti-patterns
 * Demotion by anti-patterns (`whenNotToUse`, PID `antiPatterns`; DESIGN §3.3): each phrase is
 * one small BM25 document, so a match is judged phrase by phrase. A query that covers at
 * least `threshold` of a phrase's own score lowers its tool's score, the more the closer the
 * coverage gets to the whole phrase (at least a quarter of `penalty`).
 */
import type { RetrievalDocument } from '../document.ts';
import { buildLexicalIndex, type LexicalIndex, type WeightedTerm } from '../lexical-index.ts';
import { terms } from '../tokenizer.ts';

/** The anti-pattern phrases of a document set. */
export interface AntiPatterns {
  lexical: LexicalIndex;
  /** Document position owning each phrase. */
  owner: Int32Array;
  /** The most a query can score against each phrase: its own terms, each once. */
  selfScore: Float32Array;
  /** Reused buffer of per-phrase query scores (scoring is synchronous: one search at a time). */
  phraseScores: Float32Array;
}

/** Indexes the documents' anti-pattern phrases; undefined when no document has one. */
export function buildAntiPatterns(documents: readonly RetrievalDocument[], k1: number): AntiPatterns | undefined {
  const phraseTerms: string[][][] = [];
  const owners: number[] = [];
  documents.forEach((document, i) => {
    for (const phrase of document.whenNotToUse ?? []) {
      if (!phrase.trim()) continue;
      phraseTerms.push([terms(phrase)]);
      owners.push(i);
    }
  });
  if (phraseTerms.length === 0) return undefined;
  const lexical = buildLexicalIndex(phraseTerms, [{ weight: 1, b: 0 }], k1);
  const selfScore = new Float32Array(phraseTerms.length);
  const single = new Float32Array(phraseTerms.length);
  phraseTerms.forEach(([phrase], p) => {
    single.fill(0);
    lexical.accumulate([...new Set(phrase)].map((term) => ({ term, weight: 1 })), single);
    selfScore[p] = single[p]!;
  });
  return { lexical, owner: Int32Array.from(owners), selfScore, phraseScores: new Float32Array(phraseTerms.length) };
}

/** Multiplies the scores of documents whose anti-patterns the query's own terms match by their demotion factor. */
export function demoteByAntiPatterns(
  scores: Float32Array,
  antiPatterns: AntiPatterns,
  queryTerms: readonly WeightedTerm[],
  penalty: number,
  threshold: number,
): void {
  const { lexical, owner, selfScore, phraseScores } = antiPatterns;
  phraseScores.fill(0);
  lexical.accumulate(queryTerms, phraseScores);
  const demoted = new Map<number, number>();
  for (let p = 0; p < owner.length; p++) {
    const coverage = selfScore[p]! > 0 ? Math.min(1, phraseScores[p]! / selfScore[p]!) : 0;
    if (coverage < threshold) continue;
    const strength = (coverage - threshold) / Math.max(1e-9, 1 - threshold);
    const factor = 1 - penalty * Math.max(strength, 0.25);
    demoted.set(owner[p]!, Math.min(demoted.get(owner[p]!) ?? 1, factor));
  }
  for (const [d, factor] of demoted) scores[d]! *= factor;
}
