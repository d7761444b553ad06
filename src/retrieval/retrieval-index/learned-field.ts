/**
 * @module retrieval/retrieval-index/learned-field
 * An organisation's learned requests scored as if they were written in its tools' example
 * field (issue #25). The index is shared by every tenant, so learned requests cannot be
 * written into it; a search instead carries the caller's learned text per tool, and the
 * lexical pass adds, for each request term a tool learned, what BM25F would have added had
 * the text been in that tool's example field: idf × query weight × (sat(tf + Δ) − sat(tf)),
 * where tf is the tool's own pseudo-frequency of the term in the shared index, Δ the learned
 * occurrences weighted and length-normalised like the example field, and sat the index's
 * saturation. So a learned word the tool's own text already carries adds little (it
 * saturates), a word no tool's text carries adds at full idf (a vocabulary gap closed), and a
 * topic word that several tools learned counts with the idf that sharing gives it. A tool the
 * request never matched enters the ranking when its learned requests match (candidates, not
 * only a rerank). Scores go into the lexical rows before their normalisation, clause split
 * and vector pools, exactly where the example field's would.
 */
import { fieldNames } from '../document.ts';
import type { WeightedTerm } from '../lexical-index.ts';
import type { RetrievalSettings } from './settings.ts';
import type { Snapshot } from './snapshot.ts';

/** One tool's learned text: occurrences per term (index terms, `tokenizer.terms`) and the field length, both weighted by the caller. */
export interface LearnedToolText {
  readonly frequency: ReadonlyMap<string, number>;
  readonly length: number;
}

/** A caller's learned requests by tool id. Immutable: a change makes a new one (compilations are cached by identity). */
export interface LearnedExampleField {
  readonly tools: ReadonlyMap<string, LearnedToolText>;
}

interface Compiled {
  /** term → positions of tools that learned it and their Δ pseudo-frequency. */
  byTerm: Map<string, { positions: Int32Array; extra: Float64Array }>;
  /** term → how many of those tools do not carry it in the shared index (their df joins the idf). */
  newDf: Map<string, number>;
}

const compiledOf = new WeakMap<LearnedExampleField, WeakMap<Snapshot, Compiled>>();
const examplesField = fieldNames.indexOf('examples');

/** Resolves the field against one snapshot (positions, lengths, new document frequencies); cached. */
function compile(field: LearnedExampleField, view: Snapshot, settings: RetrievalSettings): Compiled {
  let perView = compiledOf.get(field);
  const cached = perView?.get(view);
  if (cached) return cached;
  const { weight, b } = settings.fields[examplesField]!;
  const size = view.documents.length;
  const present: Array<[number, LearnedToolText]> = [];
  let learnedLength = 0;
  for (const [toolId, text] of field.tools) {
    const position = view.positionOf.get(toolId);
    if (position === undefined || !(text.length > 0)) continue;
    present.push([position, text]);
    learnedLength += text.length;
  }
  // The example field's average length once the learned text has joined it (an empty field's
  // average is stored as ~0).
  const baseAverage = view.lexical.averageFieldLength(examplesField);
  const average = Math.max((baseAverage > 1e-6 ? baseAverage * size : 0) + learnedLength, 1e-9) / Math.max(size, 1);
  const lists = new Map<string, Array<[number, number]>>();
  const newDf = new Map<string, number>();
  for (const [position, text] of present) {
    const norm = 1 - b + (b * text.length) / average;
    for (const [term, count] of text.frequency) {
      if (!(count > 0)) continue;
      const list = lists.get(term) ?? [];
      list.push([position, (weight * count) / norm]);
      lists.set(term, list);
      if (view.lexical.pseudoFrequency(term, position) === 0) newDf.set(term, (newDf.get(term) ?? 0) + 1);
    }
  }
  const byTerm = new Map<string, { positions: Int32Array; extra: Float64Array }>();
  for (const [term, list] of lists) byTerm.set(term, { positions: Int32Array.from(list, ([p]) => p), extra: Float64Array.from(list, ([, e]) => e) });
  const compiled = { byTerm, newDf };
  if (!perView) {
    perView = new WeakMap();
    compiledOf.set(field, perView);
  }
  perView.set(view, compiled);
  return compiled;
}

/**
 * Adds the learned example field's share to rows `from`…`terms.length − 1` (text t's row at
 * `[t·size, (t+1)·size)`), after the shared postings were accumulated into them.
 */
export function addLearnedField(field: LearnedExampleField, view: Snapshot, settings: RetrievalSettings, terms: readonly (readonly WeightedTerm[])[], rows: Float32Array, from: number): void {
  if (field.tools.size === 0) return;
  const { byTerm, newDf } = compile(field, view, settings);
  if (byTerm.size === 0) return;
  const size = view.documents.length;
  const lexical = view.lexical;
  const k1 = lexical.k1;
  const saturate = (tf: number) => (Number.isFinite(tf) ? (tf * (k1 + 1)) / (tf + k1) : k1 + 1);
  for (let t = from; t < terms.length; t++) {
    const offset = t * size;
    for (const { term, weight } of terms[t]!) {
      const entry = byTerm.get(term);
      if (!entry || weight === 0) continue;
      const df = lexical.documentFrequency(term) + (newDf.get(term) ?? 0);
      const factor = Math.log(1 + (size - df + 0.5) / (df + 0.5)) * weight;
      for (let i = 0; i < entry.positions.length; i++) {
        const position = entry.positions[i]!;
        const own = lexical.pseudoFrequency(term, position);
        rows[offset + position]! += factor * (saturate(own + entry.extra[i]!) - saturate(own));
      }
    }
  }
}
