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
 * over a copied suffix, so a long tool text costs O(n × longest piece), not O(n²).
 */

/** `[piece, log-probability]` pairs, the layout of the package's vocab.json. */
export type Vocabulary = ReadonlyArray<readonly [string, number]>;

const separator = '\u2581';
/** Ids 0–5 are reserved (unknown, <s>, </s>, extra tokens) and never matched. */
const reservedSymbols = 6;

interface TrieNode {
  children: Map<string, TrieNode>;
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
      let child = node.children.get(symbol);
      if (!child) node.children.set(symbol, (child = newNode()));
      node = child;
    }
    node.id = id;
    node.score = score;
  }

  return {
    encode(text) {
      const normalized = text.normalize('NFKC');
      if (normalized.length === 0) return [];
      const symbols = Array.from(separator + normalized.replace(/ /g, separator));
      const n = symbols.length;
      // Per end position, the best path's score and its last piece (as in the package:
      // score 0 means "none yet", and a later candidate with an equal score wins).
      const best = new Float64Array(n + 1);
      const words = new Int32Array(n + 1);
      // Candidates grouped by end position, visited in order of their start (ascending),
      // which is the package's object-key order.
      const starts: number[][] = Array.from({ length: n + 1 }, () => []);
      const ids: number[][] = Array.from({ length: n + 1 }, () => []);
      const scores: number[][] = Array.from({ length: n + 1 }, () => []);
      for (let i = 0; i < n; i++) {
        let node = root.children.get(symbols[i]!);
        let found = false;
        for (let j = i; j < n && node; j++) {
          if (node.id >= 0) {
            starts[j + 1]!.push(i);
            ids[j + 1]!.push(node.id);
            scores[j + 1]!.push(node.score);
            found = true;
          }
          node = node.children.get(symbols[j + 1]!);
        }
        if (!found) {
          starts[i + 1]!.push(i);
          ids[i + 1]!.push(0);
          scores[i + 1]!.push(0);
        }
      }
      for (let end = 0; end <= n; end++) {
        const endStarts = starts[end]!;
        for (let c = 0; c < endStarts.length; c++) {
          const score = scores[end]![c]! + best[endStarts[c]!]!;
          if (best[end] === 0 || score >= best[end]!) {
            best[end] = score;
            words[end] = ids[end]![c]!;
          }
        }
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
