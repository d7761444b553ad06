/**
 * @module selection/learning/lexical-field
 * A scope's learned requests as a lexical example field (issue #25). The shared index serves
 * every tenant, so an organisation's learned requests cannot join its BM25F example field;
 * this is that field for one organisation: per tool, its examples' terms (each example's
 * occurrences weighted by its agreement weight, agreement.ts), BM25-saturated and
 * length-normalised across the scope's tools, idf over the scope's examples.
 *
 * A tool's score for a request is the idf-weighted share of the request's content terms its
 * field covers (each term's saturation in [0, 1)), so it lies in [0, 1): 0 when none of the
 * request's words were ever taught for the tool, and near 1 only when several agreeing
 * examples used them all. Words the scope never saw count at full idf against every tool,
 * so a request mostly about something new gets little from its learned neighbours.
 */

/** An example as the field reads it. */
export interface FieldExample {
  toolId: string;
  terms: readonly string[];
  /** Agreement weight in [0, 1]. */
  weight: number;
}

/** The field of one scope. Immutable. */
export interface LexicalField {
  /** Coverage per tool in [0, 1) (only tools above 0), within `candidateIds` when given. */
  scores(queryTerms: readonly string[], candidateIds?: ReadonlySet<string>): Map<string, number>;
}

const k1 = 1.2;
const b = 0.75;

/** Builds the field. */
export function buildLexicalField(examples: readonly FieldExample[]): LexicalField {
  const n = examples.length;
  const df = new Map<string, number>();
  const tools = new Map<string, { frequency: Map<string, number>; length: number }>();
  for (const example of examples) {
    for (const term of example.terms) df.set(term, (df.get(term) ?? 0) + 1);
    if (example.weight <= 0) continue;
    const tool = tools.get(example.toolId) ?? { frequency: new Map<string, number>(), length: 0 };
    for (const term of example.terms) tool.frequency.set(term, (tool.frequency.get(term) ?? 0) + example.weight);
    tool.length += example.weight * example.terms.length;
    tools.set(example.toolId, tool);
  }
  let total = 0;
  for (const tool of tools.values()) total += tool.length;
  const averageLength = tools.size === 0 ? 1 : Math.max(total / tools.size, 1e-9);
  // Term → [tool, saturated frequency] postings.
  const postings = new Map<string, Array<[string, number]>>();
  for (const [toolId, tool] of tools) {
    const norm = 1 - b + (b * tool.length) / averageLength;
    for (const [term, frequency] of tool.frequency) {
      const list = postings.get(term) ?? [];
      list.push([toolId, frequency / (frequency + k1 * norm)]);
      postings.set(term, list);
    }
  }
  const idf = (term: string) => Math.log(1 + (n - (df.get(term) ?? 0) + 0.5) / ((df.get(term) ?? 0) + 0.5));
  return {
    scores(queryTerms, candidateIds) {
      const out = new Map<string, number>();
      if (tools.size === 0 || queryTerms.length === 0) return out;
      let mass = 0;
      for (const term of queryTerms) {
        const weight = idf(term);
        mass += weight;
        for (const [toolId, saturated] of postings.get(term) ?? []) {
          if (candidateIds && !candidateIds.has(toolId)) continue;
          out.set(toolId, (out.get(toolId) ?? 0) + weight * saturated);
        }
      }
      for (const [toolId, score] of out) out.set(toolId, mass > 0 ? score / mass : 0);
      return out;
    },
  };
}
