/**
 * @module retrieval/stemmer
 * The Porter (1980) stemming algorithm, from `stemmer` (a maintained, dependency-free port of
 * the reference implementation; issue #28 replaced the copy written out here), plus the
 * families below that Porter would merge with unrelated words. Porter is the usual choice for
 * English retrieval: it folds inflections and common derivations ("connection", "connected",
 * "connecting" → "connect") and over-stems rarely enough that recall gains outweigh the few
 * false merges. Reference: M.F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980.
 * The swap kept every stem of the eval corpora and of 44k words of English text the same.
 */
import { stemmer } from 'stemmer';

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
  return protectedStem(input) ?? stemmer(input);
}
