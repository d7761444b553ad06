/**
 * @module retrieval/stemmer
 * The Porter (1980) stemming algorithm, written out here so the lexical index and the
 * offline embedder need no dependency. Porter is the usual choice for English retrieval:
 * it folds inflections and common derivations ("connection", "connected", "connecting" →
 * "connect") and over-stems rarely enough that recall gains outweigh the few false merges.
 * Reference: M.F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980.
 */

function isConsonant(word: string, i: number): boolean {
  const c = word.charCodeAt(i);
  // a e i o u
  if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117) return false;
  if (c === 121) return i === 0 ? true : !isConsonant(word, i - 1); // y
  return true;
}

/** m(): the number of VC sequences in word[0, end). */
function measure(word: string, end: number): number {
  let n = 0;
  let i = 0;
  while (i < end && isConsonant(word, i)) i++;
  while (i < end) {
    while (i < end && !isConsonant(word, i)) i++;
    if (i >= end) break;
    n++;
    while (i < end && isConsonant(word, i)) i++;
  }
  return n;
}

function hasVowel(word: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(word, i)) return true;
  return false;
}

function endsWithDoubleConsonant(word: string, end: number): boolean {
  return end >= 2 && word[end - 1] === word[end - 2] && isConsonant(word, end - 1);
}

/** *o: stem ends consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(word: string, end: number): boolean {
  if (end < 3) return false;
  if (!isConsonant(word, end - 1) || isConsonant(word, end - 2) || !isConsonant(word, end - 3)) return false;
  const last = word[end - 1];
  return last !== 'w' && last !== 'x' && last !== 'y';
}

type Rule = readonly [suffix: string, replacement: string];

/** Replaces the first matching suffix when the remaining stem has measure > minMeasure. */
function applyRules(word: string, rules: readonly Rule[], minMeasure: number): string {
  for (const [suffix, replacement] of rules) {
    if (word.endsWith(suffix)) {
      const stemEnd = word.length - suffix.length;
      return measure(word, stemEnd) > minMeasure ? word.slice(0, stemEnd) + replacement : word;
    }
  }
  return word;
}

const step2Rules: readonly Rule[] = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'],
  ['bli', 'ble'], ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'],
  ['ization', 'ize'], ['ation', 'ate'], ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'],
  ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'], ['iviti', 'ive'], ['biliti', 'ble'],
  ['logi', 'log'],
];
const step3Rules: readonly Rule[] = [
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
];
const step4Suffixes = [
  'al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou',
  'ism', 'ate', 'iti', 'ous', 'ive', 'ize',
] as const;

// Longest suffix first, as the algorithm requires when several end the word.
const step2Sorted = [...step2Rules].sort((a, b) => b[0].length - a[0].length);
const step3Sorted = [...step3Rules].sort((a, b) => b[0].length - a[0].length);
const step4Sorted = [...step4Suffixes].sort((a, b) => b.length - a.length);

/**
 * Words whose Porter stem is another, unrelated word, so a query and a document (and the
 * concept lexicon, concepts.ts) would merge them: "news" → "new", "wellness" → "well",
 * "important" → "import", "general" → "gener" (generate), "personal" → "person",
 * "organization" → "organ" (organize, organic), "authorize" → "author". Each family here gets
 * its own stem instead (issue #13). Found by the collision checks in concepts.test.ts.
 */
const protectedFamilies: readonly (readonly [stem: string, words: readonly string[]])[] = [
  ['news', ['news']],
  ['wellness', ['wellness']],
  ['importan', ['important', 'importance', 'importantly', 'unimportant']],
  ['general', ['general', 'generally']],
  // "personal" and "personalize" stay one family (a personal touch is personalised content), apart from "person".
  ['personal', ['personal', 'personally', 'personalize', 'personalise', 'personalized', 'personalised', 'personalizing', 'personalising', 'personalization', 'personalisation']],
  ['personality', ['personality', 'personalities']],
  ['publication', ['publication']],
  ['excellen', ['excellent', 'excellence', 'excellently']],
  ['organic', ['organic', 'organically']],
  ['organization', ['organization', 'organisation', 'organizational', 'organisational']],
  ['organiz', ['organize', 'organise', 'organized', 'organised', 'organizing', 'organising', 'organizer', 'organiser']],
  ['community', ['community', 'communities']],
  ['productivity', ['productivity']],
  ['positive', ['positive', 'positively']],
  ['customiz', ['customize', 'customise', 'customized', 'customised', 'customizing', 'customising', 'customization', 'customisation', 'customizable']],
  ['hospitality', ['hospitality']],
  ['definitely', ['definitely']],
  ['authentic', ['authentic', 'authenticity']],
  ['conversation', ['conversation', 'conversational']],
  ['projection', ['projection']],
  ['presentation', ['presentation']],
  ['mindful', ['mindful', 'mindfulness']],
  ['exceptional', ['exceptional', 'exceptionally']],
  ['localiz', ['localize', 'localise', 'localized', 'localised', 'localizing', 'localization', 'localisation']],
  ['authoriz', ['authorize', 'authorise', 'authorized', 'authorised', 'authorizing', 'authorization', 'authorisation']],
  ['container', ['container']],
];
const protectedStems = new Map<string, string>();
for (const [stem, words] of protectedFamilies) for (const word of words) protectedStems.set(word, stem);

/** The protected stem of a word or of its plain plural ("organizations", "communities"), if any. */
function protectedStem(word: string): string | undefined {
  const direct = protectedStems.get(word);
  if (direct !== undefined) return direct;
  if (word.endsWith('ies')) return protectedStems.get(`${word.slice(0, -3)}y`);
  if (word.endsWith('s') && !word.endsWith('ss')) return protectedStems.get(word.slice(0, -1));
  return undefined;
}

/** Porter-stems one lower-case word; words of one or two letters are returned unchanged. */
export function porterStem(input: string): string {
  if (input.length <= 2) return input;
  const kept = protectedStem(input);
  if (kept !== undefined) return kept;
  let word = input;

  // Step 1a: plurals.
  if (word.endsWith('sses')) word = word.slice(0, -2);
  else if (word.endsWith('ies')) word = word.slice(0, -2);
  else if (word.endsWith('ss')) { /* unchanged */ }
  else if (word.endsWith('s')) word = word.slice(0, -1);

  // Step 1b: -eed, -ed, -ing.
  let step1bExtra = false;
  if (word.endsWith('eed')) {
    if (measure(word, word.length - 3) > 0) word = word.slice(0, -1);
  } else if (word.endsWith('ed') && hasVowel(word, word.length - 2)) {
    word = word.slice(0, -2);
    step1bExtra = true;
  } else if (word.endsWith('ing') && hasVowel(word, word.length - 3)) {
    word = word.slice(0, -3);
    step1bExtra = true;
  }
  if (step1bExtra) {
    if (word.endsWith('at') || word.endsWith('bl') || word.endsWith('iz')) word += 'e';
    else if (endsWithDoubleConsonant(word, word.length) && !/[lsz]$/.test(word)) word = word.slice(0, -1);
    else if (measure(word, word.length) === 1 && endsCvc(word, word.length)) word += 'e';
  }

  // Step 1c: y → i when the stem has a vowel.
  if (word.endsWith('y') && hasVowel(word, word.length - 1)) word = `${word.slice(0, -1)}i`;

  word = applyRules(word, step2Sorted, 0);
  word = applyRules(word, step3Sorted, 0);

  // Step 4: drop a suffix when m > 1 (-ion only after s or t).
  for (const suffix of step4Sorted) {
    if (!word.endsWith(suffix)) continue;
    const stemEnd = word.length - suffix.length;
    if (measure(word, stemEnd) > 1 && (suffix !== 'ion' || /[st]$/.test(word.slice(0, stemEnd)))) {
      word = word.slice(0, stemEnd);
    }
    break;
  }

  // Step 5a: final -e; 5b: -ll → -l.
  if (word.endsWith('e')) {
    const m = measure(word, word.length - 1);
    if (m > 1 || (m === 1 && !endsCvc(word, word.length - 1))) word = word.slice(0, -1);
  }
  if (word.endsWith('ll') && measure(word, word.length) > 1) word = word.slice(0, -1);
  return word;
}
