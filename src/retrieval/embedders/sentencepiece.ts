/**
 * @module retrieval/embedders/sentencepiece
 * The word-piece tokenizer of Universal Sentence Encoder Lite, without TF.js: the distilled
 * token table (`token-table.ts`) must split a text exactly as the model does, and must not
 * load the model's runtime to do it.
 *
 * A port of the tokenizer in `@energetic-ai/embeddings` 0.2.0 (`lib/tokenizer.ts`, itself
 * from TensorFlow.js models' universal-sentence-encoder; Copyright 2019 Google LLC,
 * Apache-2.0), with the same output, its quirks included (a piece's length counted in code
 * points while matching and in UTF-16 units while walking back; a tie goes to the later
 * start). What changed is speed: the trie is walked from each position in place instead of
 * over a copied suffix, and the lattice is solved in one forward pass without storing it, so a
 * long tool text costs O(n × longest piece), not O(n²).
 */

/** `[piece, log-probability]` pairs, the layout of the package's vocab.json. */
export type Vocabulary = ReadonlyArray<readonly [string, number]>;

const separator = '\u2581';
/** Ids 0–5 are reserved (unknown, <s>, </s>, extra tokens) and never matched. */
const reservedSymbols = 6;

interface TrieNode {
  /** Children by code point. */
  children: Map<number, TrieNode>;
  /** Vocabulary id when a piece ends here, else -1. */
  id: number;
  score: number;
}

const newNode = (): TrieNode => ({ children: new Map(), id: -1, score: 0 });

/** A tokenizer for one vocabulary. */
export interface PieceTokenizer {
  /** Vocabulary ids of `text`, as the model reads it (0 for a character no piece covers). */
  encode(text: string): number[];
}

/** Builds the tokenizer of `vocabulary`. */
export function createPieceTokenizer(vocabulary: Vocabulary): PieceTokenizer {
  const root = newNode();
  for (let id = reservedSymbols; id < vocabulary.length; id++) {
    const [piece, score] = vocabulary[id]!;
    let node = root;
    for (const symbol of piece) {
      const code = symbol.codePointAt(0)!;
      let child = node.children.get(code);
      if (!child) node.children.set(code, (child = newNode()));
      node = child;
    }
    node.id = id;
    node.score = score;
  }

  return {
    encode(text) {
      const normalized = text.normalize('NFKC');
      if (normalized.length === 0) return [];
      const marked = separator + normalized.replace(/ /g, separator);
      // Code points (a symbol is one code point, as in the package's stringToChars).
      const symbols = new Int32Array(marked.length);
      let n = 0;
      for (let at = 0; at < marked.length; ) {
        const code = marked.codePointAt(at)!;
        symbols[n++] = code;
        at += code > 0xffff ? 2 : 1;
      }
      // Per end position, the best path's score and its last piece. The package visits the
      // candidates ending at each position in order of their start and takes one when no path
      // is known yet (score 0) or its score is at least the best so far. A forward pass over
      // start positions visits them in that same order, and a position's best is final before
      // any candidate starts there, so it gives the same choices without storing candidates.
      const best = new Float64Array(n + 1);
      const words = new Int32Array(n + 1);
      const offer = (end: number, id: number, score: number): void => {
        if (best[end] === 0 || score >= best[end]!) {
          best[end] = score;
          words[end] = id;
        }
      };
      for (let i = 0; i < n; i++) {
        let node = root.children.get(symbols[i]!);
        let found = false;
        for (let j = i; j < n && node; j++) {
          if (node.id >= 0) {
            offer(j + 1, node.id, node.score + best[i]!);
            found = true;
          }
          node = j + 1 < n ? node.children.get(symbols[j + 1]!) : undefined;
        }
        if (!found) offer(i + 1, 0, best[i]!);
      }
      const reversed: number[] = [];
      let at = n;
      while (at > 0) {
        const id = words[at]!;
        reversed.push(id);
        at -= vocabulary[id]![0].length;
      }
      // Runs of unknown characters collapse to one unknown id.
      const result: number[] = [];
      let previousUnknown = false;
      for (const id of reversed) {
        if (!(previousUnknown && id === 0)) result.push(id);
        previousUnknown = id === 0;
      }
      return result.reverse();
    },
  };
}
