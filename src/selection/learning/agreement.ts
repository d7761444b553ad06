/**
 * @module selection/learning/agreement
 * How much one learned example may count (issue #25: noisy feedback must not easily teach the
 * wrong tool). An outcome is one contributor's word that a request wanted a tool; a model that
 * picked a plausible neighbour and "succeeded" says the same thing with the same confidence.
 * What tells them apart is what *other* contributors did with similar requests:
 *
 * - **agreement**: distinct other contributors whose examples of the same tool are similar;
 * - **conflict**: distinct contributors whose examples of *other* tools are similar (a later
 *   similar request that called another tool decays the example: this is how "its tool was
 *   later not called" reaches it, through what that later request taught).
 *
 * weight = min(1, (1 + agreeing) × agreementShare) × (1 + agreeing) / (1 + agreeing + conflicting)
 *
 * A lone example carries `agreementShare` of full weight until another contributor agrees; an
 * example outvoted by contributors who taught another tool for such requests fades in
 * proportion. Contributors, not examples, are counted, so one user's flood agrees with nobody
 * and outvotes at most as one. Similarity is lexical (idf-weighted cosine of content terms,
 * idf within the scope), with a floor calibrated on public data (retrieval/calibration.ts).
 */

/** What the weighting reads of an example. */
export interface WeighedExample {
  id: string;
  toolId: string;
  contributor: string;
  /** Content terms (distinct). */
  terms: readonly string[];
}

/** Settings of the weighting. */
export interface AgreementSettings {
  /** Idf-weighted cosine above which two requests are taken to want the same tool. */
  similarityFloor: number;
  /** Weight of an example no other contributor agrees with (full weight from 1 / share contributors). */
  agreementShare: number;
}

/**
 * Terms held by more than this share of a scope's examples (and more than 50 of them) do not
 * pair examples up: they carry little idf, and their postings would make pairing quadratic.
 */
const commonTermShare = 0.05;

/** Idf-weighted cosine similarity of every pair of examples sharing an uncommon term, as a callback. */
export function forEachSimilarPair(examples: readonly WeighedExample[], floor: number, visit: (a: number, b: number) => void): void {
  const n = examples.length;
  const df = new Map<string, number>();
  for (const example of examples) for (const term of example.terms) df.set(term, (df.get(term) ?? 0) + 1);
  const idf = (term: string) => Math.log(1 + n / (df.get(term) ?? 1));
  const norms = examples.map((example) => Math.sqrt(example.terms.reduce((sum, term) => sum + idf(term) ** 2, 0)));
  const commonAbove = Math.max(50, commonTermShare * n);
  const postings = new Map<string, number[]>();
  examples.forEach((example, i) => {
    for (const term of example.terms) {
      if (df.get(term)! > commonAbove) continue;
      const list = postings.get(term) ?? [];
      list.push(i);
      postings.set(term, list);
    }
  });
  const overlap = new Float64Array(n);
  const touched: number[] = [];
  for (let i = 0; i < n; i++) {
    for (const term of examples[i]!.terms) {
      const list = postings.get(term);
      if (!list) continue;
      const weight = idf(term) ** 2;
      for (const j of list) {
        if (j <= i) continue;
        if (overlap[j] === 0) touched.push(j);
        overlap[j]! += weight;
      }
    }
    for (const j of touched) {
      const denominator = norms[i]! * norms[j]!;
      if (denominator > 0 && overlap[j]! / denominator > floor) visit(i, j);
      overlap[j] = 0;
    }
    touched.length = 0;
  }
}

/** Each example's weight in [0, 1] (by id). */
export function exampleWeights(examples: readonly WeighedExample[], settings: AgreementSettings): Map<string, number> {
  const agreeing = examples.map(() => new Set<string>());
  const conflicting = examples.map(() => new Set<string>());
  forEachSimilarPair(examples, settings.similarityFloor, (a, b) => {
    const left = examples[a]!;
    const right = examples[b]!;
    if (left.contributor === right.contributor) return;
    if (left.toolId === right.toolId) {
      agreeing[a]!.add(right.contributor);
      agreeing[b]!.add(left.contributor);
    } else {
      conflicting[a]!.add(right.contributor);
      conflicting[b]!.add(left.contributor);
    }
  });
  const weights = new Map<string, number>();
  examples.forEach((example, i) => {
    const agree = 1 + agreeing[i]!.size;
    const conflict = conflicting[i]!.size;
    weights.set(example.id, Math.min(1, agree * settings.agreementShare) * (agree / (agree + conflict)));
  });
  return weights;
}

/** What the agreement floor's calibration measured. */
export interface AgreementCalibration {
  floor: number;
  falseMatchRate: number;
  /** Share of same-tool pairs above the floor. */
  sameToolAbove: number;
  samePairs: number;
  differentPairs: number;
}

/**
 * The agreement floor from public labelled requests (retrieval/calibration.ts's groups): the
 * (1 − falseMatchRate) quantile of the idf-weighted cosine between requests for different
 * tools, so at most that share of unrelated requests count as agreeing or conflicting.
 */
export function calibrateAgreementFloor(groups: ReadonlyArray<readonly string[]>, analyse: (text: string) => readonly string[], options: { falseMatchRate?: number; perGroup?: number; maxGroups?: number } = {}): AgreementCalibration {
  const falseMatchRate = options.falseMatchRate ?? 0.05;
  const chosen = groups.filter((group) => group.length >= 2).slice(0, options.maxGroups ?? 80).map((group) => group.slice(0, options.perGroup ?? 4));
  const examples: WeighedExample[] = chosen.flatMap((group, g) => group.map((text, i) => ({ id: `${g}.${i}`, toolId: String(g), contributor: `${g}.${i}`, terms: analyse(text) })));
  const same: number[] = [];
  const different: number[] = [];
  for (const [a, b, cosine] of pairCosines(examples)) (examples[a]!.toolId === examples[b]!.toolId ? same : different).push(cosine);
  const n = examples.length;
  let samePairs = 0;
  for (const group of chosen) samePairs += (group.length * (group.length - 1)) / 2;
  const differentPairs = (n * (n - 1)) / 2 - samePairs;
  // Pairs that share no term (not listed) have cosine 0.
  const all = [...different, ...Array.from({ length: differentPairs - different.length }, () => 0)].sort((x, y) => x - y);
  const floor = all.length === 0 ? 0 : all[Math.min(all.length - 1, Math.max(0, Math.ceil((1 - falseMatchRate) * all.length) - 1))]!;
  return { floor, falseMatchRate, sameToolAbove: samePairs === 0 ? 0 : same.filter((value) => value > floor).length / samePairs, samePairs, differentPairs };
}

/** Idf-weighted cosine of every pair of examples sharing a term, as [a, b, cosine]. */
function pairCosines(examples: readonly WeighedExample[]): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  const n = examples.length;
  const df = new Map<string, number>();
  for (const example of examples) for (const term of example.terms) df.set(term, (df.get(term) ?? 0) + 1);
  const idf = (term: string) => Math.log(1 + n / (df.get(term) ?? 1));
  const norms = examples.map((example) => Math.sqrt(example.terms.reduce((sum, term) => sum + idf(term) ** 2, 0)));
  const sets = examples.map((example) => new Set(example.terms));
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let overlap = 0;
      for (const term of examples[i]!.terms) if (sets[j]!.has(term)) overlap += idf(term) ** 2;
      if (overlap > 0 && norms[i]! > 0 && norms[j]! > 0) out.push([i, j, overlap / (norms[i]! * norms[j]!)]);
    }
  }
  return out;
}
