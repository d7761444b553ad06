/**
 * @module retrieval/tokenizer
 * Turns tool metadata and queries into index terms. Identifiers are split the way people
 * read them (`getHealthWorkforce`, `get_health_workforce`, `get-health-workforce`,
 * `file2pdf` → get health workforce / file 2 pdf), text is folded to lower-case ASCII
 * where it has diacritics, and every word is Porter-stemmed.
 *
 * Function words are not dropped. In a tool catalog they are rare in documents and
 * frequent in chatty queries ("can you tell me what it will…"), so inverse document
 * frequency alone would over-reward them; instead `termWeight` gives them a small weight
 * at query time. They still count, so a one-word query such as "will" or "can" still
 * matches, and an upper-case "IT" or "US" in the query is read as a content word.
 */
import { porterStem } from './stemmer.ts';

/** One word of a text: its surface form as written and its index term. */
export interface Token {
  /** The word as it appears after identifier splitting (original case). */
  surface: string;
  /** Lower-case, stemmed index term. */
  term: string;
}

// Words, numbers and identifiers; anything else separates.
const wordPattern = /[\p{L}\p{N}]+/gu;
// Splits inside an identifier: lower→Upper, ACRONYMWord, letter↔digit.
const identifierSplit = /(?<=[\p{Ll}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;

const stemCache = new Map<string, string>();
const stemCacheLimit = 200_000;

/** Porter stem with a bounded memo: catalogs and queries repeat the same words constantly. */
export function stem(word: string): string {
  const cached = stemCache.get(word);
  if (cached !== undefined) return cached;
  const result = /^[a-z]+$/.test(word) ? porterStem(word) : word;
  if (stemCache.size >= stemCacheLimit) stemCache.clear();
  stemCache.set(word, result);
  return result;
}

/** Splits text into surface words, breaking camelCase, snake_case, kebab-case and letter/digit runs. */
export function splitWords(text: string): string[] {
  // ASCII text (nearly every query and tool) takes a hand-written scanner with the same
  // result as the Unicode regular expressions below, at a fraction of their cost.
  if (!/[^\u0000-\u007f]/.test(text)) return splitAsciiWords(text);
  const words: string[] = [];
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '');
  for (const match of folded.matchAll(wordPattern)) {
    const chunk = match[0];
    if (chunk.length === 1 || !/\p{Lu}|\p{N}/u.test(chunk)) {
      words.push(chunk);
      continue;
    }
    for (const part of chunk.split(identifierSplit)) if (part) words.push(part);
  }
  return words;
}

// Character classes of ASCII codes: 1 lower-case letter, 2 upper-case letter, 3 digit, 0 other.
const asciiClass = new Uint8Array(128);
for (let c = 97; c <= 122; c++) asciiClass[c] = 1;
for (let c = 65; c <= 90; c++) asciiClass[c] = 2;
for (let c = 48; c <= 57; c++) asciiClass[c] = 3;

/** `splitWords` for pure-ASCII text. */
function splitAsciiWords(text: string): string[] {
  const words: string[] = [];
  const length = text.length;
  let i = 0;
  while (i < length) {
    if (asciiClass[text.charCodeAt(i)] === 0) {
      i++;
      continue;
    }
    let part = i;
    let previous = asciiClass[text.charCodeAt(i)]!;
    let j = i + 1;
    for (; j < length; j++) {
      const kind = asciiClass[text.charCodeAt(j)]!;
      if (kind === 0) break;
      // Boundaries: lower→Upper, ACRONYM|Word (upper before upper+lower), letter↔digit.
      const boundary =
        (previous === 1 && kind === 2) ||
        (previous === 2 && kind === 2 && j + 1 < length && asciiClass[text.charCodeAt(j + 1)] === 1) ||
        (previous !== 3 && kind === 3) ||
        (previous === 3 && kind !== 3);
      if (boundary) {
        words.push(text.slice(part, j));
        part = j;
      }
      previous = kind;
    }
    words.push(text.slice(part, j));
    i = j;
  }
  return words;
}

/** Tokenizes text into stemmed, lower-case terms with their surface forms. */
export function tokenize(text: string): Token[] {
  return splitWords(text).map((surface) => ({ surface, term: stem(surface.toLowerCase()) }));
}

/** Index terms of a text (stemmed, lower-case), in order, with repeats. */
export function terms(text: string): string[] {
  return splitWords(text).map((surface) => stem(surface.toLowerCase()));
}

// Closed-class English words (pronouns, determiners, auxiliaries, prepositions,
// conjunctions) plus request boilerplate ("please", "want", "need"). Stored stemmed.
const functionWordList = `a about above after again all also am an and any are as at be been before being
below between both but by can could did do does doing down during each either else etc even every few for
from further had has have having he her here hers herself him himself his how i if in into is it its itself
just let like may me might mine more most much must my myself need neither no nor not now of off on once
only or other our ours ourselves out over own please same shall she should so some such than that the their
theirs them themselves then there these they this those though through thus to too under until up upon us
very via want was we were what whatever when where whether which while who whom whose why will with within
without would yet you your yours yourself yourselves kindly would could also additionally finally next
help assist provide give tell show know get let'`
  .split(/\s+/)
  .filter(Boolean);

/**
 * Query-time function words. The generic request verbs ("get", "provide", "help") are here
 * because nearly every tool could satisfy them; a tool whose name starts with "get" still
 * matches them, only more weakly.
 */
export const functionWords: ReadonlySet<string> = new Set(functionWordList.map((w) => stem(w)));

/** Weight of a query token: small for function words (unless written in capitals), else 1. */
export function termWeight(token: Token, functionWordWeight: number): number {
  if (!functionWords.has(token.term)) return 1;
  // "IT", "US", "WHO": an all-caps word of two or more letters is an acronym, not a function word.
  if (token.surface.length >= 2 && token.surface === token.surface.toUpperCase() && /\p{Lu}/u.test(token.surface)) return 1;
  return functionWordWeight;
}
