/**
 * @module retrieval/embedders/offline
 * The built-in embedder: no weights to download, no network, same vector for the same text
 * on every machine. A text becomes a bag of features (stemmed words, adjacent-word
 * bigrams and character n-grams of each word, which tie together morphological variants
 * the stemmer misses: "cryptocurrency" / "crypto"), each hashed with a sign into a fixed
 * number of dimensions (Weinberger et al., "Feature Hashing for Large Scale Multitask
 * Learning", 2009), weighted by sublinear term frequency, and L2-normalised.
 *
 * A vector depends on its own text only, never on the rest of the catalog, so adding one
 * tool never invalidates the stored vectors of the others (differential sync re-embeds
 * exactly the changed tools, DESIGN §6). Function words get a small fixed weight instead
 * of a corpus IDF for the same reason.
 */
import { functionWords, splitWords, stem } from '../tokenizer.ts';
import { normalizeInPlace, type Embedder } from './embedder.ts';

/** Settings of the offline embedder; every one of them is part of its modelId. */
export interface OfflineEmbedderOptions {
  /** Vector length (default 384, the size the HNSW index in migration 0001 covers). */
  dimensions?: number;
  /** Character n-gram sizes taken from each word (default 3 to 5). */
  ngramSizes?: readonly number[];
  /** Total weight of one word's n-grams relative to the word itself (default 0.5). */
  ngramWeight?: number;
  /** Weight of an adjacent-word bigram (default 0.5). */
  bigramWeight?: number;
  /** Weight of a function word (default 0.1). */
  functionWordWeight?: number;
}

// 2: the stemmer keeps protected words apart ("news" is no longer "new", issue #13), so
// vectors stored under version 1 are recomputed.
const version = 2;

/** 32-bit FNV-1a followed by a murmur3 finaliser (good avalanche for short keys). */
export function hashFeature(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}


/** Character n-grams of a word with boundary marks (none for short words and numbers). */
function wordNgrams(word: string, sizes: readonly number[]): string[] {
  if (word.length <= 3 || /^\d+$/.test(word)) return [];
  const padded = `<${word}>`;
  const grams: string[] = [];
  for (const size of sizes) for (let i = 0; i + size <= padded.length; i++) grams.push(padded.slice(i, i + size));
  return grams;
}

/** Creates the offline embedder. Deterministic: equal text gives an equal vector. */
export function createOfflineEmbedder(options: OfflineEmbedderOptions = {}): Embedder {
  const settings: Required<OfflineEmbedderOptions> = Object.freeze({
    dimensions: options.dimensions ?? 384,
    ngramSizes: Object.freeze([...(options.ngramSizes ?? [3, 4, 5])]),
    ngramWeight: options.ngramWeight ?? 0.5,
    bigramWeight: options.bigramWeight ?? 0.5,
    functionWordWeight: options.functionWordWeight ?? 0.1,
  });
  const { dimensions } = settings;
  const modelId = `quiver-offline-v${version}-d${dimensions}-n${settings.ngramSizes.join('')}-c${settings.ngramWeight}-b${settings.bigramWeight}-f${settings.functionWordWeight}`;
  // Signed slot of a feature: low bits pick the dimension, the top bit the sign (slots are 1-based).
  const slot = (feature: string): number => {
    const h = hashFeature(feature, 0x9e3779b9);
    return (h >>> 31) === 0 ? (h % dimensions) + 1 : -((h % dimensions) + 1);
  };
  // A word's own features (stem + character n-grams) never change: hash them once.
  const wordCache = new Map<string, { slots: Int32Array; weights: Float32Array; term: string; isFunction: boolean }>();
  const wordFeatures = (word: string) => {
    let cached = wordCache.get(word);
    if (cached) return cached;
    const term = stem(word);
    const isFunction = functionWords.has(term);
    const slots = [slot(`w:${term}`)];
    const weights = [isFunction ? settings.functionWordWeight : 1];
    if (!isFunction && settings.ngramWeight > 0) {
      // The n-grams of one word together weigh about `ngramWeight` (in L2 terms) next to the word.
      const grams = wordNgrams(word, settings.ngramSizes);
      const share = settings.ngramWeight / Math.sqrt(Math.max(grams.length, 1));
      for (const gram of grams) {
        slots.push(slot(`c:${gram}`));
        weights.push(share);
      }
    }
    cached = { slots: Int32Array.from(slots), weights: Float32Array.from(weights), term, isFunction };
    if (wordCache.size >= 100_000) wordCache.clear();
    wordCache.set(word, cached);
    return cached;
  };

  // Feature weights per signed slot (the same slot twice means the same feature, bar rare
  // collisions), in a reused dense buffer indexed by slot + dimensions, reset through the
  // list of touched slots: no per-text map.
  const weightBySlot = new Float64Array(2 * dimensions + 1);
  const touched = new Int32Array(2 * dimensions + 1);
  const embedOne = (text: string): Float32Array => {
    let touchedCount = 0;
    const add = (signed: number, weight: number): void => {
      const at = signed + dimensions;
      if (weightBySlot[at] === 0) touched[touchedCount++] = at;
      weightBySlot[at]! += weight;
    };
    let previous: string | undefined;
    for (const surface of splitWords(text)) {
      const features = wordFeatures(surface.toLowerCase());
      for (let i = 0; i < features.slots.length; i++) add(features.slots[i]!, features.weights[i]!);
      if (features.isFunction) {
        previous = undefined;
        continue;
      }
      if (previous !== undefined && settings.bigramWeight > 0) add(slot(`b:${previous} ${features.term}`), settings.bigramWeight);
      previous = features.term;
    }
    const vector = new Float32Array(dimensions);
    for (let i = 0; i < touchedCount; i++) {
      const at = touched[i]!;
      const count = weightBySlot[at]!;
      weightBySlot[at] = 0;
      // Sublinear TF: a word said three times is not three times as telling.
      const weight = count > 1 ? 1 + Math.log(count) : count;
      const signed = at - dimensions;
      if (signed > 0) vector[signed - 1]! += weight;
      else vector[-signed - 1]! -= weight;
    }
    return normalizeInPlace(vector);
  };

  return Object.freeze({
    specificationVersion: 'v1' as const,
    provider: 'quiver-offline',
    modelId,
    dimensions,
    maxBatchSize: 4096,
    async embed(texts: readonly string[]) {
      return texts.map(embedOne);
    },
  });
}
