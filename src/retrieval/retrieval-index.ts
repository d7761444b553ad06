/**
 * @module retrieval/retrieval-index
 * The hybrid retrieval index other parts use (DESIGN §3.3): BM25F over fielded text, dense
 * vectors from a pluggable Embedder (Tool2Vec for tools with examples), calibrated score
 * fusion, clause-level ranking for multi-intent requests, and demotion by anti-patterns.
 *
 * Relevance fails open (DESIGN §3.4): when the embedder cannot embed the catalog or the
 * query, search ranks lexically and says so in `warnings`. The index holds everything in
 * memory; the database stays the truth (callers pass persisted vectors to `build`).
 *
 * @example
 * const index = createRetrievalIndex({ embedder: createOfflineEmbedder() });
 * await index.build(documents);
 * const { results, warnings } = await index.search('convert this PDF to text', { k: 5 });
 */
import { QuiverError } from '../core/errors.ts';
import { documentFields, fieldNames, type FieldName, type RetrievalDocument } from './document.ts';
import type { Embedder } from './embedders/embedder.ts';
import { buildLexicalIndex, type FieldParameters, type LexicalIndex, type WeightedTerm } from './lexical-index.ts';
import { relatedTerms } from './concepts.ts';
import { splitClauses } from './multi-intent.ts';
import { termWeight, terms, tokenize } from './tokenizer.ts';
import { checkVectors, defaultTextShare, embedDocuments } from './tool2vec.ts';
import { TopKCollector, topK } from './top-k.ts';

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
   * for the offline embedder (its vectors carry mostly lexical evidence) and 1 for neural ones.
   */
  vectorWeight?: number;
  /**
   * How many lexical hits per query text the vectors rerank, or 'all' to score every
   * candidate. Default: 30 for the offline embedder (10 to 100 measured the same), 'all' for
   * neural ones.
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
}

/** One ranked tool. */
export interface RetrievalResult {
  id: string;
  score: number;
  /** 1-based rank of the tool in the whole-query lexical ranking (absent when it had no lexical match). */
  lexicalRank?: number;
  /** 1-based rank of the tool by whole-query vector similarity (absent without vectors). */
  vectorRank?: number;
}

/** A search's answer: ranked tools and any degradation the caller should know about. */
export interface RetrievalSearchResult {
  results: RetrievalResult[];
  warnings: string[];
}

/** Options of one search. */
export interface SearchOptions {
  /** How many tools to return (default 10). */
  k?: number;
  /**
   * Restricts results to these tool ids (selection applies policy before retrieval). Treated
   * as immutable: its mask over the index is cached by Set identity (and size), so callers
   * that reuse one Set per visible set (selection's page-set cache) pay O(size) once.
   */
  candidateIds?: ReadonlySet<string>;
  /** Report lexicalRank / vectorRank per result (default true; costs O(size) per result). */
  includeRanks?: boolean;
  signal?: AbortSignal;
}

/** Options of `build` and `upsert`. */
export interface BuildOptions {
  /** Vectors already computed by the same embedder (e.g. read from pgvector), by tool id. */
  vectors?: ReadonlyMap<string, Float32Array>;
  signal?: AbortSignal;
}

/** The index. */
export interface RetrievalIndex {
  /** Number of indexed tools. */
  readonly size: number;
  /** True when tool vectors are available for ranking. */
  readonly hasVectors: boolean;
  /** Warnings from the last build/upsert (e.g. the embedder failed). */
  readonly warnings: readonly string[];
  /** Replaces the whole index with these documents. */
  build(documents: readonly RetrievalDocument[], options?: BuildOptions): Promise<void>;
  /** Adds or replaces documents; only they are embedded. */
  upsert(documents: readonly RetrievalDocument[], options?: BuildOptions): Promise<void>;
  /** Removes documents by id (unknown ids are ignored). */
  remove(ids: readonly string[]): void;
  /** Ranks tools for a query. */
  search(query: string, options?: SearchOptions): Promise<RetrievalSearchResult>;
  /** The vector held for a tool, if any (for persistence). */
  vectorOf(id: string): Float32Array | undefined;
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

interface Settings {
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
}

function resolveSettings(options: RetrievalOptions, embedder: Embedder | undefined): Settings {
  const offline = embedder?.provider === 'quiver-offline';
  const fields = fieldNames.map((name) => ({ ...defaultFields[name], ...options.fields?.[name] }));
  for (const field of fields) {
    if (!(field.weight >= 0) || !(field.b >= 0 && field.b <= 1)) {
      throw new QuiverError('invalid_config', 'field weights must be ≥ 0 and b in [0, 1]');
    }
  }
  const depth = options.vectorDepth ?? (offline ? 30 : 'all');
  return {
    fields,
    k1: options.k1 ?? 1.2,
    functionWordWeight: options.functionWordWeight ?? 0.2,
    conceptWeight: options.conceptWeight ?? 0.15,
    vectorWeight: options.vectorWeight ?? (offline ? 0.3 : 1),
    vectorDepth: depth === 'all' ? Number.POSITIVE_INFINITY : Math.max(1, depth),
    multiIntent: options.multiIntent ?? true,
    wholeQueryWeight: options.wholeQueryWeight ?? 0.3,
    textShare: options.textShare ?? defaultTextShare,
    antiPatternPenalty: options.antiPatternPenalty ?? 0.5,
    antiPatternThreshold: options.antiPatternThreshold ?? 0.6,
  };
}

/** Weighted query terms: repeated terms add up; function words count little (tokenizer). */
export function queryTerms(text: string, functionWordWeight: number): WeightedTerm[] {
  return analyseText(text, functionWordWeight).own;
}

/**
 * A text's own weighted terms and, when expanding, the concept lexicon's near-synonyms of
 * its content words (function words are never expanded) that it does not already contain.
 */
function analyseText(text: string, functionWordWeight: number, expand = false): { own: WeightedTerm[]; related: string[] } {
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

/** Everything derived from the document set; rebuilt lazily after upsert/remove. */
interface Snapshot {
  documents: RetrievalDocument[];
  positionOf: Map<string, number>;
  idOrder: Int32Array;
  lexical: LexicalIndex;
  /** Row-major vectors (size × dimensions), rows of tools without a vector are zero. */
  matrix: Float32Array | undefined;
  hasVector: Uint8Array;
  antiPatterns: { lexical: LexicalIndex; owner: Int32Array; selfScore: Float32Array } | undefined;
  /**
   * Reused buffers: scoring is synchronous, so one search uses them at a time and no
   * search allocates size-long arrays. `rows` holds one lexical score row per query text
   * (whole request, then its clauses), `bonus` the matching vector-score rows, which are
   * zero except at the few reranked documents and are reset through the pool lists.
   */
  scratch: { rows: Float32Array; bonus: Float32Array; capacity: number; similarities: Float32Array; final: Float32Array; phrases: Float32Array };
  /**
   * Candidate masks by Set identity. `mask` is undefined when the set covers every document
   * (no filtering needed). Keyed per snapshot, so a rebuild drops them.
   */
  masks: WeakMap<ReadonlySet<string>, { size: number; mask: Uint8Array | undefined }>;
}

/** A query split into its texts (whole request first, then clauses) with their weighted terms. */
interface QueryAnalysis {
  texts: string[];
  terms: WeightedTerm[][];
  /** The whole request's terms without concept expansion. */
  ownTerms: WeightedTerm[];
  /** True when the clauses' terms add up to the whole request's (they partition its words). */
  wholeIsSum: boolean;
}

/** How many analysed queries (and query vectors) each index remembers; repeated requests skip the work. */
const queryCacheSize = 512;

/** Creates an empty retrieval index. Without an embedder it ranks lexically. */
export function createRetrievalIndex(config: { embedder?: Embedder; options?: RetrievalOptions } = {}): RetrievalIndex {
  const embedder = config.embedder;
  const settings = resolveSettings(config.options ?? {}, embedder);
  const documents = new Map<string, RetrievalDocument>();
  const vectors = new Map<string, Float32Array>();
  let buildWarnings: string[] = [];
  let vectorsEnabled = embedder !== undefined;
  let snapshot: Snapshot | undefined;

  const embedInto = async (batch: readonly RetrievalDocument[], options: BuildOptions): Promise<void> => {
    if (!embedder || !vectorsEnabled) return;
    const missing: RetrievalDocument[] = [];
    for (const document of batch) {
      const given = options.vectors?.get(document.id);
      if (given && given.length === embedder.dimensions) vectors.set(document.id, given);
      else missing.push(document);
    }
    if (missing.length === 0) return;
    try {
      const embedded = await embedDocuments(embedder, missing, {
        textShare: settings.textShare,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      missing.forEach((document, i) => vectors.set(document.id, embedded[i]!));
    } catch (error) {
      // Fail open: lexical ranking still works (DESIGN §3.4, seed 001 §10.1).
      vectorsEnabled = false;
      vectors.clear();
      buildWarnings.push(`embedder ${embedder.modelId} failed, ranking lexically: ${(error as Error).message}`);
    }
  };

  const rebuild = (): Snapshot => {
    analyses.clear(); // concept expansion depends on the catalog's document frequencies
    const list = [...documents.values()];
    const positionOf = new Map(list.map((document, i) => [document.id, i]));
    const sortedIds = list.map((document, i) => [document.id, i] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const idOrder = new Int32Array(list.length);
    sortedIds.forEach(([, position], order) => (idOrder[position] = order));
    const lexical = buildLexicalIndex(
      list.map((document) => {
        const fields = documentFields(document);
        return fieldNames.map((name) => terms(fields[name]));
      }),
      settings.fields,
      settings.k1,
    );
    let matrix: Float32Array | undefined;
    const hasVector = new Uint8Array(list.length);
    if (embedder && vectorsEnabled && vectors.size > 0) {
      const dimensions = embedder.dimensions;
      matrix = new Float32Array(list.length * dimensions);
      list.forEach((document, i) => {
        const vector = vectors.get(document.id);
        if (!vector) return;
        matrix!.set(vector, i * dimensions);
        hasVector[i] = 1;
      });
    }
    // Anti-patterns: one small document per phrase, so a match is judged phrase by phrase.
    const phraseTerms: string[][][] = [];
    const owners: number[] = [];
    list.forEach((document, i) => {
      for (const phrase of document.whenNotToUse ?? []) {
        if (!phrase.trim()) continue;
        phraseTerms.push([terms(phrase)]);
        owners.push(i);
      }
    });
    let antiPatterns: Snapshot['antiPatterns'];
    if (phraseTerms.length > 0) {
      const antiLexical = buildLexicalIndex(phraseTerms, [{ weight: 1, b: 0 }], settings.k1);
      const selfScore = new Float32Array(phraseTerms.length);
      const single = new Float32Array(phraseTerms.length);
      phraseTerms.forEach(([phrase], p) => {
        // The most a query can score against phrase p: the phrase's own terms, each once.
        single.fill(0);
        antiLexical.accumulate([...new Set(phrase)].map((term) => ({ term, weight: 1 })), single);
        selfScore[p] = single[p]!;
      });
      antiPatterns = { lexical: antiLexical, owner: Int32Array.from(owners), selfScore };
    }
    const n = list.length;
    return {
      documents: list,
      positionOf,
      idOrder,
      lexical,
      matrix,
      hasVector,
      antiPatterns,
      scratch: {
        rows: new Float32Array(n * 4),
        bonus: new Float32Array(n * 4),
        capacity: 4,
        similarities: new Float32Array(n),
        final: new Float32Array(n),
        phrases: new Float32Array(phraseTerms.length),
      },
      masks: new WeakMap(),
    };
  };

  const current = (): Snapshot => (snapshot ??= rebuild());

  /** Bounded memo of query analysis and query vectors, keyed by the query text (oldest out first). */
  const analyses = new Map<string, QueryAnalysis>();
  const queryVectorCache = new Map<string, Float32Array[]>();
  const remember = <V>(cache: Map<string, V>, key: string, value: V): V => {
    if (cache.size >= queryCacheSize) cache.delete(cache.keys().next().value!);
    cache.set(key, value);
    return value;
  };
  const analyse = (query: string): QueryAnalysis => {
    const known = analyses.get(query);
    if (known) return known;
    const clauses = settings.multiIntent ? splitClauses(query) : [query];
    const texts = clauses.length > 1 ? [query, ...clauses] : [query];
    // Own terms first: they decide whether the clauses partition the request.
    const expand = settings.conceptWeight > 0;
    const analysed = texts.map((text) => analyseText(text, settings.functionWordWeight, expand));
    const ownLists = analysed.map((a) => a.own);
    const sumOf = (lists: WeightedTerm[][]): Map<string, number> => {
      const sum = new Map<string, number>();
      for (const list of lists) for (const { term, weight } of list) sum.set(term, (sum.get(term) ?? 0) + weight);
      return sum;
    };
    let wholeIsSum = false;
    if (texts.length > 1) {
      const sum = sumOf(ownLists.slice(1));
      wholeIsSum =
        sum.size === ownLists[0]!.length &&
        ownLists[0]!.every(({ term, weight }) => Math.abs((sum.get(term) ?? Number.NaN) - weight) <= 1e-9 * Math.max(1, weight));
    }
    let termLists = ownLists;
    if (expand) {
      // Near-synonyms at a low weight, only those the catalog has and not too common (their
      // long postings would cost time for little evidence). When the clauses partition the
      // request, the request's terms are the sum of the clauses' (its row stays their sum).
      const lexical = current().lexical;
      const maxDf = Math.max(50, 0.02 * lexical.size);
      termLists = analysed.map(({ own, related }) => {
        const list = [...own];
        for (const term of related) {
          const df = lexical.documentFrequency(term);
          if (df > 0 && df <= maxDf) list.push({ term, weight: settings.conceptWeight });
        }
        return list;
      });
      if (wholeIsSum) termLists[0] = [...sumOf(termLists.slice(1))].map(([term, weight]) => ({ term, weight }));
    }
    // Anti-patterns are matched on the request's own words, not on their near-synonyms.
    const ownTerms = ownLists[0]!;
    return remember(analyses, query, { texts, terms: termLists, ownTerms, wholeIsSum });
  };

  /**
   * Scores every text of a query in one pass over the postings, then fuses. Per text: the
   * lexical score normalised by its best candidate, plus `vectorWeight` × vector similarity
   * normalised the same way, the vectors reranking the `vectorDepth` best lexical hits (all
   * candidates when 'all'). With clauses, a tool's score is whole × wholeQueryWeight plus
   * its best clause score, each normalised by its best (the max over clauses of clause +
   * share of the whole). Returns the final score row (a scratch buffer).
   */
  const scoreQuery = (
    view: Snapshot,
    analysis: QueryAnalysis,
    queryVectors: Float32Array[] | undefined,
    mask: Uint8Array | undefined,
    ranks: { lexical: Float32Array | undefined; vector: Map<number, number> | undefined },
  ): Float32Array => {
    const n = view.documents.length;
    const textCount = analysis.texts.length;
    const scratch = view.scratch;
    if (scratch.capacity < textCount) {
      scratch.capacity = Math.max(textCount, scratch.capacity * 2);
      scratch.rows = new Float32Array(n * scratch.capacity);
      scratch.bonus = new Float32Array(n * scratch.capacity);
    }
    const { rows, bonus, similarities, final } = scratch;
    rows.fill(0, 0, n * textCount);
    const lexicalMax = new Float64Array(textCount);
    const matrix = view.matrix;
    const useVectors = queryVectors !== undefined && matrix !== undefined && settings.vectorWeight > 0;
    // The vectors' pools (each text's best lexical hits) are picked in the same pass that
    // finds each row's best, instead of one more pass over every row.
    const collectors =
      useVectors && Number.isFinite(settings.vectorDepth)
        ? Array.from({ length: textCount }, (_, t) => new TopKCollector(settings.vectorDepth, rows, t * n, view.idOrder))
        : undefined;
    const worst = new Float64Array(textCount).fill(Number.NEGATIVE_INFINITY);
    if (textCount > 1 && analysis.wholeIsSum) {
      // The clauses partition the request's words and BM25 is linear in the query term
      // weights, so the whole request's row is the sum of the clause rows: every posting
      // is read once and added once. One pass sums and finds each row's best.
      view.lexical.accumulateRows(analysis.terms.slice(1), rows.subarray(n));
      for (let d = 0; d < n; d++) {
        const candidate = mask === undefined || mask[d] === 1;
        let sum = 0;
        for (let t = 1, at = n + d; t < textCount; t++, at += n) {
          const value = rows[at]!;
          sum += value;
          if (!candidate) continue;
          if (value > lexicalMax[t]!) lexicalMax[t] = value;
          if (collectors !== undefined && value > 0 && value >= worst[t]!) {
            collectors[t]!.offer(d);
            worst[t] = collectors[t]!.worst;
          }
        }
        rows[d] = sum;
        if (!candidate) continue;
        // The best is kept unrounded (as before); the pool compares the stored value, as topK did.
        if (sum > lexicalMax[0]!) lexicalMax[0] = sum;
        const stored = rows[d]!;
        if (collectors !== undefined && stored > 0 && stored >= worst[0]!) {
          collectors[0]!.offer(d);
          worst[0] = collectors[0]!.worst;
        }
      }
    } else {
      view.lexical.accumulateRows(analysis.terms, rows);
      for (let t = 0; t < textCount; t++) {
        let best = 0;
        const collector = collectors?.[t];
        let floor = Number.NEGATIVE_INFINITY;
        for (let d = 0, at = t * n; d < n; d++, at++) {
          const value = rows[at]!;
          if (!(value > 0) || (mask !== undefined && mask[d] !== 1)) continue;
          if (value > best) best = value;
          if (collector !== undefined && value >= floor) {
            collector.offer(d);
            floor = collector.worst;
          }
        }
        lexicalMax[t] = best;
      }
    }
    if (ranks.lexical) ranks.lexical.set(rows.subarray(0, n));
    const lexicalScale = new Float64Array(textCount);
    const textMax = new Float64Array(textCount);
    for (let t = 0; t < textCount; t++) {
      lexicalScale[t] = lexicalMax[t]! > 0 ? 1 / lexicalMax[t]! : 0;
      textMax[t] = lexicalMax[t]! > 0 ? 1 : 0;
    }

    // Vectors: each text's pool (its best lexical hits, or every candidate) gets a bonus row.
    const pools: ArrayLike<number>[] = [];
    if (useVectors && queryVectors !== undefined && matrix !== undefined) {
      let everyCandidate: number[] | undefined;
      for (let t = 0; t < textCount; t++) {
        const base = t * n;
        let pool: ArrayLike<number>;
        if (collectors !== undefined) pool = collectors[t]!.result();
        else {
          if (!everyCandidate) {
            everyCandidate = [];
            for (let d = 0; d < n; d++) if (mask === undefined || mask[d] === 1) everyCandidate.push(d);
          }
          pool = everyCandidate;
        }
        const vector = queryVectors[t]!;
        const dimensions = vector.length;
        let vectorMax = 0;
        for (let p = 0; p < pool.length; p++) {
          const d = pool[p]!;
          if (!view.hasVector[d]) {
            similarities[p] = 0;
            continue;
          }
          const offset = d * dimensions;
          let s0 = 0;
          let s1 = 0;
          let i = 0;
          for (; i + 1 < dimensions; i += 2) {
            s0 += matrix[offset + i]! * vector[i]!;
            s1 += matrix[offset + i + 1]! * vector[i + 1]!;
          }
          if (i < dimensions) s0 += matrix[offset + i]! * vector[i]!;
          const similarity = s0 + s1;
          similarities[p] = similarity;
          if (t === 0) ranks.vector?.set(d, similarity);
          if (similarity > vectorMax) vectorMax = similarity;
        }
        if (vectorMax <= 0) continue;
        pools.push(pool, [t]);
        const vectorScale = settings.vectorWeight / vectorMax;
        for (let p = 0; p < pool.length; p++) {
          const similarity = similarities[p]!;
          if (!(similarity > 0)) continue;
          const d = pool[p]!;
          const value = similarity * vectorScale;
          bonus[base + d] = value;
          const total = rows[base + d]! * lexicalScale[t]! + value;
          if (total > textMax[t]!) textMax[t] = total;
        }
      }
    }

    // Fusion. Multi-intent: each clause ranks on its own (plus a share of the whole query),
    // and a tool keeps its best clause score, so every intent reaches the top of the list.
    const wholeBonusScale = textCount === 1 ? 1 : textMax[0]! > 0 ? settings.wholeQueryWeight / textMax[0]! : 0;
    const wholeScale = lexicalScale[0]! * wholeBonusScale;
    const clauseBonusScale = new Float64Array(textCount);
    const clauseScale = new Float64Array(textCount);
    for (let t = 1; t < textCount; t++) {
      clauseBonusScale[t] = textMax[t]! > 0 ? 1 / textMax[t]! : 0;
      clauseScale[t] = lexicalScale[t]! * clauseBonusScale[t]!;
    }
    // Lexical part for every candidate first; the few documents with a vector bonus after.
    for (let d = 0; d < n; d++) {
      if (mask !== undefined && mask[d] !== 1) {
        final[d] = 0;
        continue;
      }
      let best = 0;
      for (let t = 1, at = n + d; t < textCount; t++, at += n) {
        const value = rows[at]! * clauseScale[t]!;
        if (value > best) best = value;
      }
      final[d] = rows[d]! * wholeScale + best;
    }
    for (let i = 0; i < pools.length; i += 2) {
      const pool = pools[i]!;
      for (let p = 0; p < pool.length; p++) {
        const d = pool[p]!;
        let best = 0;
        for (let t = 1, at = n + d; t < textCount; t++, at += n) {
          const value = rows[at]! * clauseScale[t]! + bonus[at]! * clauseBonusScale[t]!;
          if (value > best) best = value;
        }
        final[d] = rows[d]! * wholeScale + bonus[d]! * wholeBonusScale + best;
      }
    }
    // Reset the bonus rows through the pools, so the next search starts from zeros.
    for (let i = 0; i < pools.length; i += 2) {
      const pool = pools[i]!;
      const base = pools[i + 1]![0]! * n;
      for (let p = 0; p < pool.length; p++) bonus[base + pool[p]!] = 0;
    }
    return final;
  };

  /**
   * The candidate mask of a Set (cached by identity and size): undefined when the Set covers
   * every indexed document, so the hot loops skip the per-document check.
   */
  const candidateMask = (view: Snapshot, candidateIds: ReadonlySet<string>): Uint8Array | undefined => {
    const cached = view.masks.get(candidateIds);
    if (cached && cached.size === candidateIds.size) return cached.mask;
    const n = view.documents.length;
    let mask: Uint8Array | undefined = new Uint8Array(n);
    let covered = 0;
    for (const id of candidateIds) {
      const position = view.positionOf.get(id);
      if (position !== undefined && mask[position] === 0) {
        mask[position] = 1;
        covered++;
      }
    }
    if (covered === n) mask = undefined;
    view.masks.set(candidateIds, { size: candidateIds.size, mask });
    return mask;
  };

  /** 1-based rank of document d in `scores` among candidates, or undefined when it did not score. */
  const rankOf = (scores: Float32Array | Map<number, number>, d: number, view: Snapshot, mask: Uint8Array | undefined): number | undefined => {
    const mine = scores instanceof Map ? scores.get(d) : scores[d];
    if (mine === undefined || (scores instanceof Float32Array && !(mine > 0))) return undefined;
    let rank = 1;
    const consider = (i: number, other: number): void => {
      if (i === d || (mask !== undefined && mask[i] !== 1)) return;
      if (other > mine || (other === mine && view.idOrder[i]! < view.idOrder[d]!)) rank++;
    };
    if (scores instanceof Map) for (const [i, other] of scores) consider(i, other);
    else for (let i = 0; i < scores.length; i++) consider(i, scores[i]!);
    return rank;
  };

  return {
    get size() {
      return documents.size;
    },
    get hasVectors() {
      return embedder !== undefined && vectorsEnabled && vectors.size > 0;
    },
    get warnings() {
      return buildWarnings;
    },
    async build(list, options = {}) {
      const ids = new Set<string>();
      for (const document of list) {
        if (ids.has(document.id)) throw new QuiverError('invalid_input', `duplicate tool id '${document.id}'`);
        ids.add(document.id);
      }
      documents.clear();
      vectors.clear();
      buildWarnings = [];
      vectorsEnabled = embedder !== undefined;
      for (const document of list) documents.set(document.id, document);
      await embedInto(list, options);
      snapshot = undefined;
    },
    async upsert(list, options = {}) {
      for (const document of list) {
        documents.set(document.id, document);
        vectors.delete(document.id);
      }
      await embedInto(list, options);
      snapshot = undefined;
    },
    remove(ids) {
      let changed = false;
      for (const id of ids) {
        changed = documents.delete(id) || changed;
        vectors.delete(id);
      }
      if (changed) snapshot = undefined;
    },
    vectorOf(id) {
      return vectors.get(id);
    },
    async search(query, options = {}) {
      const k = options.k ?? 10;
      const warnings = [...buildWarnings];
      const analysis = analyse(query);
      const texts = analysis.texts;
      let queryVectors: Float32Array[] | undefined;
      if (embedder && vectorsEnabled && vectors.size > 0 && settings.vectorWeight > 0) {
        queryVectors = queryVectorCache.get(query);
        if (!queryVectors) {
          try {
            queryVectors = await embedder.embed(texts, options.signal ? { signal: options.signal } : undefined);
            checkVectors(embedder, queryVectors, texts.length);
            remember(queryVectorCache, query, queryVectors);
          } catch (error) {
            queryVectors = undefined;
            warnings.push(`embedder ${embedder.modelId} failed on the query, ranking lexically: ${(error as Error).message}`);
          }
        }
      }
      // From here on everything is synchronous, so concurrent searches cannot interleave.
      const view = current();
      const n = view.documents.length;
      const mask = options.candidateIds ? candidateMask(view, options.candidateIds) : undefined;
      const includeRanks = options.includeRanks ?? true;
      const wholeLexical = includeRanks ? new Float32Array(n) : undefined;
      const wholeVector = includeRanks && queryVectors ? new Map<number, number>() : undefined;
      const final = scoreQuery(view, analysis, queryVectors, mask, { lexical: wholeLexical, vector: wholeVector });
      if (view.antiPatterns && settings.antiPatternPenalty > 0) {
        const { lexical: antiLexical, owner, selfScore } = view.antiPatterns;
        const phraseScores = view.scratch.phrases;
        phraseScores.fill(0);
        antiLexical.accumulate(analysis.ownTerms, phraseScores);
        const demoted = new Map<number, number>();
        for (let p = 0; p < owner.length; p++) {
          const coverage = selfScore[p]! > 0 ? Math.min(1, phraseScores[p]! / selfScore[p]!) : 0;
          if (coverage < settings.antiPatternThreshold) continue;
          const strength = (coverage - settings.antiPatternThreshold) / Math.max(1e-9, 1 - settings.antiPatternThreshold);
          const factor = 1 - settings.antiPatternPenalty * Math.max(strength, 0.25);
          demoted.set(owner[p]!, Math.min(demoted.get(owner[p]!) ?? 1, factor));
        }
        for (const [d, factor] of demoted) final[d]! *= factor;
      }
      const top = topK(final, k, view.idOrder, mask, 0);
      const results = top.map((d) => {
        const result: RetrievalResult = { id: view.documents[d]!.id, score: final[d]! };
        if (!wholeLexical) return result;
        const lexicalRank = rankOf(wholeLexical, d, view, mask);
        if (lexicalRank !== undefined) result.lexicalRank = lexicalRank;
        const vectorRank = wholeVector && wholeVector.size > 0 ? rankOf(wholeVector, d, view, mask) : undefined;
        if (vectorRank !== undefined) result.vectorRank = vectorRank;
        return result;
      });
      return { results, warnings };
    },
  };
}
