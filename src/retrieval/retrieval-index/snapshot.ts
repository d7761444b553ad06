/**
 * @module retrieval/retrieval-index/snapshot
 * Everything the scoring passes read, derived from the document set in one go: positions and
 * the id order ties break by, the BM25F index, the row-major vector matrix, the anti-pattern
 * phrases, reused score buffers and the candidate masks. The index rebuilds it lazily after
 * a build, upsert or remove, so a burst of writes costs one rebuild.
 */
import { documentFields, fieldNames, type RetrievalDocument } from '../document.ts';
import { buildLexicalIndex, type LexicalIndex } from '../lexical-index.ts';
import { terms } from '../tokenizer.ts';
import { findRemovalTools } from './action-intent.ts';
import { buildAntiPatterns, type AntiPatterns } from './anti-patterns.ts';
import type { CandidateMasks } from './candidate-mask.ts';
import type { QuantisedRow } from './quantised-rows.ts';
import { buildPlanSteps, type PlanSteps } from './plan-steps.ts';
import { createScratch, type ScoreScratch } from './scratch.ts';
import type { RetrievalSettings } from './settings.ts';

/** The derived, immutable-until-rebuilt view of the documents. */
export interface Snapshot {
  documents: RetrievalDocument[];
  positionOf: Map<string, number>;
  /** Each position's rank in id order: ties between equal scores break by id. */
  idOrder: Int32Array;
  lexical: LexicalIndex;
  /**
   * Row-major quantised vectors (size × dimensions int8 codes, `quantised-rows.ts`) and each
   * row's scale; rows of tools without a vector are zero.
   */
  matrix: Int8Array | undefined;
  scales: Float32Array | undefined;
  hasVector: Uint8Array;
  antiPatterns: AntiPatterns | undefined;
  /** Positions of removal tools (`action-intent.ts`), undefined when there are none. */
  removalTools: Int32Array | undefined;
  /** Who needs which opaque value and who produces it (`plan-steps.ts`); undefined when nothing chains. */
  planSteps: PlanSteps | undefined;
  scratch: ScoreScratch;
  /** Candidate masks by Set identity; keyed per snapshot, so a rebuild drops them. */
  masks: CandidateMasks;
}

/** The tool vectors to rank with, when the index has any. */
export interface VectorRows {
  dimensions: number;
  vectors: ReadonlyMap<string, QuantisedRow>;
}

/** Derives a snapshot from the documents (in their order) and, when given, their vectors. */
export function buildSnapshot(list: RetrievalDocument[], vectors: VectorRows | undefined, settings: RetrievalSettings): Snapshot {
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
  let matrix: Int8Array | undefined;
  let scales: Float32Array | undefined;
  const hasVector = new Uint8Array(list.length);
  if (vectors !== undefined) {
    const { dimensions } = vectors;
    const codes = new Int8Array(list.length * dimensions);
    const rowScales = new Float32Array(list.length);
    list.forEach((document, i) => {
      const row = vectors.vectors.get(document.id);
      if (!row) return;
      codes.set(row.codes, i * dimensions);
      rowScales[i] = row.scale;
      hasVector[i] = 1;
    });
    matrix = codes;
    scales = rowScales;
  }
  return {
    documents: list,
    positionOf,
    idOrder,
    lexical,
    matrix,
    scales,
    hasVector,
    antiPatterns: buildAntiPatterns(list, settings.k1),
    removalTools: findRemovalTools(list),
    planSteps: settings.planSteps ? buildPlanSteps(list) : undefined,
    scratch: createScratch(list.length),
    masks: new WeakMap(),
  };
}
