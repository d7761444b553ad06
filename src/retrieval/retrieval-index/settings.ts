/**
 * @module retrieval/retrieval-index/settings
 * The index's tuning (`RetrievalOptions`) and its resolution into the settings the passes
 * read. Defaults are the measured ones in docs/retrieval.md; some depend on the embedder
 * (the offline embedder's vectors carry mostly lexical evidence, so they weigh less and
 * rerank only the best lexical hits).
 */
import { QuiverError } from '../../core/errors.ts';
import { fieldNames, type FieldName } from '../document.ts';
import { embedsInline, type Embedder } from '../embedders/embedder.ts';
import type { FieldParameters } from '../lexical-index.ts';
import { defaultTextShare } from '../tool2vec.ts';

/** Tuning of the index. Defaults are the measured ones in docs/retrieval.md. */
export interface RetrievalOptions {
  /** BM25F weight and length normalisation per field. */
  fields?: Partial<Record<FieldName, FieldParameters>>;
  /** BM25 term-frequency saturation. */
  k1?: number;
  /** Query weight of function words ("you", "the", "please"); see tokenizer. */
  functionWordWeight?: number;
  /**
   * Query weight of near-synonyms from the concept lexicon (`concepts.ts`) added to the
   * query's own terms (default 0.15; 0 disables expansion). Only near-synonyms found in at
   * most max(50, 2 %) of the catalog's tools are added.
   */
  conceptWeight?: number;
  /**
   * Weight of the normalised vector score next to the normalised lexical score. Default 0.3
   * for the offline embedder and the distilled token table (static word vectors: mostly
   * lexical evidence) and 1 for contextual models.
   */
  vectorWeight?: number;
  /**
   * How many lexical hits per query text the vectors rerank, or 'all' to score every
   * candidate. Default: 30 for the offline embedder and the token table (10 to 100 measured
   * the same), 'all' for contextual models.
   */
  vectorDepth?: number | 'all';
  /** Rank each clause of a multi-intent request separately and merge (default true). */
  multiIntent?: boolean;
  /** Weight of the whole-query score inside each clause's score when merging clauses. */
  wholeQueryWeight?: number;
  /** Share of the text vector in a tool vector when the tool has examples (Tool2Vec). */
  textShare?: number;
  /** How far a strongly matching anti-pattern lowers a tool's score (0 disables demotion). */
  antiPatternPenalty?: number;
  /** Fraction of an anti-pattern's weight the query must cover before it demotes. */
  antiPatternThreshold?: number;
  /** How far removal tools fall when the request does not ask for removal (0 disables; `action-intent.ts`). */
  removalPenalty?: number;
  /**
   * Clause spread: inside the best `clauseSpreadDepth` tools of a request with clauses, each further
   * tool taken from a clause that already placed one loses this share of the best score, so a
   * clause's runner-up yields to another clause's best (default 0.03; 0 disables; `clause-spread.ts`).
   * Measured with the token table (docs/retrieval.md): 0.03 raised Comp@10 on the multi-tool
   * requests of Seal-Tools (0.926 → 0.932) and MetaTool (0.566 → 0.572) and moved no single-intent
   * figure by more than one request; 0.05 and 0.08 gained more on Seal-Tools but cost MetaTool R@10.
   */
  clauseSpread?: number;
  /** Pull in the producer of an opaque value (coordinates, path, URL, id) a top tool needs (default true; `plan-steps.ts`). */
  planSteps?: boolean;
}

/** Resolved tuning: every option set, fields in `fieldNames` order, 'all' as +Infinity. */
export interface RetrievalSettings {
  fields: FieldParameters[];
  k1: number;
  functionWordWeight: number;
  conceptWeight: number;
  vectorWeight: number;
  vectorDepth: number;
  multiIntent: boolean;
  wholeQueryWeight: number;
  textShare: number;
  antiPatternPenalty: number;
  antiPatternThreshold: number;
  removalPenalty: number;
  clauseSpread: number;
  planSteps: boolean;
}

const defaultFields: Record<FieldName, FieldParameters> = {
  name: { weight: 3, b: 0.5 },
  summary: { weight: 1.5, b: 0.75 },
  description: { weight: 1, b: 0.75 },
  whenToUse: { weight: 1, b: 0.75 },
  tags: { weight: 1.5, b: 0.5 },
  parameterNames: { weight: 0.5, b: 0.5 },
  parameterDescriptions: { weight: 0.4, b: 0.75 },
  examples: { weight: 0.5, b: 0.75 },
  extra: { weight: 0.2, b: 0.75 },
};

/** Fills in the defaults for this embedder; throws `invalid_config` on a bad field weight or b. */
export function resolveSettings(options: RetrievalOptions, embedder: Embedder | undefined): RetrievalSettings {
  // Static word vectors (hashed features, the distilled token table) add to the lexical
  // evidence at a lower weight than a contextual model's: the token table measured MetaTool dev
  // cold R@5 0.762 at 0.3, 0.766 at 0.5, 0.751 at 1, and R@1 0.567 / 0.558 / 0.530 (issue #25).
  const staticVectors = embedsInline(embedder);
  const fields = fieldNames.map((name) => ({ ...defaultFields[name], ...options.fields?.[name] }));
  for (const field of fields) {
    if (!(field.weight >= 0) || !(field.b >= 0 && field.b <= 1)) {
      throw new QuiverError('invalid_config', 'field weights must be ≥ 0 and b in [0, 1]');
    }
  }
  // Static vectors rerank the 30 best lexical hits per text: for the token table the same
  // quality as scoring every candidate (Seal-Tools R@5 0.9531 vs 0.9528, MetaTool cold 0.762 both)
  // at a fraction of the cost (Seal-Tools p50 4.6 vs 60 ms under load; 4,076 × 512 per text).
  const depth = options.vectorDepth ?? (staticVectors ? 30 : 'all');
  return {
    fields,
    k1: options.k1 ?? 1.2,
    functionWordWeight: options.functionWordWeight ?? 0.2,
    conceptWeight: options.conceptWeight ?? 0.15,
    vectorWeight: options.vectorWeight ?? (staticVectors ? 0.3 : 1),
    vectorDepth: depth === 'all' ? Number.POSITIVE_INFINITY : Math.max(1, depth),
    multiIntent: options.multiIntent ?? true,
    wholeQueryWeight: options.wholeQueryWeight ?? 0.3,
    textShare: options.textShare ?? defaultTextShare,
    antiPatternPenalty: options.antiPatternPenalty ?? 0.5,
    antiPatternThreshold: options.antiPatternThreshold ?? 0.6,
    removalPenalty: options.removalPenalty ?? 0.3,
    clauseSpread: Math.max(0, options.clauseSpread ?? 0.03),
    planSteps: options.planSteps ?? true,
  };
}
