/**
 * @module retrieval/multi-intent
 * Splits a request that asks for several things into its clauses, so each intent gets its
 * own ranking. In one long query the intent with the most distinctive words fills the top
 * of a single ranking and pushes the others out; ranking clause by clause and merging
 * gives every intent a place near the top (measured as Comp@k on Seal-Tools, where most
 * queries need 3–6 tools). Quoted literals ('Ich bin froh, dich zu sehen.') are kept whole.
 */
import { functionWords, tokenize } from './tokenizer.ts';

// Discourse markers that start a new request inside a sentence.
const connectives = [
  'and then', 'after that', 'afterwards', 'additionally', 'in addition', 'also', 'furthermore', 'moreover',
  'finally', 'lastly', 'next', 'then', 'besides', 'as well as', 'plus', 'meanwhile', 'subsequently',
  'once', 'after obtaining', 'after getting', 'after retrieving', 'after',
];
const connectivePattern = new RegExp(`(?:,\\s*|\\s+)(?=(?:${connectives.map((c) => c.replace(/ /g, '\\s+')).join('|')})\\b)`, 'gi');
const minimumContentWords = 2;

/** Replaces quoted spans with same-length filler so separators inside quotes are ignored. */
function maskQuotes(text: string): string {
  const chars = [...text];
  let i = 0;
  while (i < chars.length) {
    const c = chars[i]!;
    const opensDouble = c === '"' || c === '“';
    // A single quote opens a literal only at a word start (not the apostrophe in "library's").
    const opensSingle = (c === "'" || c === '‘') && (i === 0 || /[\s(:,[]/.test(chars[i - 1]!));
    if (opensDouble || opensSingle) {
      const closers = opensDouble ? ['"', '”'] : ["'", '’'];
      let j = i + 1;
      while (j < chars.length && !(closers.includes(chars[j]!) && (opensDouble || j + 1 >= chars.length || !/\p{L}/u.test(chars[j + 1]!)))) j++;
      if (j < chars.length) {
        for (let m = i + 1; m < j; m++) chars[m] = 'x';
        i = j + 1;
        continue;
      }
    }
    i++;
  }
  return chars.join('');
}

function contentWordCount(text: string): number {
  let count = 0;
  for (const token of tokenize(text)) if (!functionWords.has(token.term) && !/^\d+$/.test(token.term)) count++;
  return count;
}

/**
 * The clauses of a query, in order: sentences, then sentence parts that start with a
 * connective ("then", "additionally", "finally", …). Parts with fewer than two content
 * words are merged into their neighbour. A single-intent query yields one clause.
 */
export function splitClauses(query: string): string[] {
  // A query wrapped in quotes as a whole is not a literal: look inside it.
  const masked = maskQuotes(/^\s*["“].*["”]\s*$/s.test(query) ? query.replace(/["“”]/g, ' ') : query);
  const cuts: number[] = [0];
  // Sentence ends: . ! ? ; or a newline, followed by space (so 47.7 and e.g. file.txt stay whole).
  for (const match of masked.matchAll(/[.!?;]+(?=\s)|\n+/g)) cuts.push(match.index + match[0].length);
  for (const match of masked.matchAll(connectivePattern)) cuts.push(match.index);
  cuts.push(query.length);
  const sorted = [...new Set(cuts)].sort((a, b) => a - b);
  const pieces: string[] = [];
  for (let i = 0; i + 1 < sorted.length; i++) {
    const piece = query.slice(sorted[i], sorted[i + 1]).replace(/^[\s,;:]+/, '').trim();
    if (piece) pieces.push(piece);
  }
  // A piece too small to stand alone ("Additionally, I", "Thank you.") joins the next piece;
  // a small last piece joins the one before it.
  const clauses: string[] = [];
  let pending = '';
  for (const piece of pieces) {
    const candidate = pending ? `${pending} ${piece}` : piece;
    if (contentWordCount(candidate) < minimumContentWords) {
      pending = candidate;
      continue;
    }
    clauses.push(candidate);
    pending = '';
  }
  if (pending) {
    if (clauses.length > 0) clauses[clauses.length - 1] = `${clauses[clauses.length - 1]} ${pending}`;
    else clauses.push(pending);
  }
  return clauses.length > 0 ? clauses : [query];
}
