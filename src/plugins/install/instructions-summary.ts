/**
 * @module plugins/install/instructions-summary
 * A plugin without a description of its own (a remote server, a bare folder) is described from
 * its server's `instructions` — which are written for the model, often a page long (issue #26: a
 * 1,000-character description). The catalog keeps their first sentence, bounded.
 */

/** Longest summary kept, characters. */
export const SUMMARY_MAX_CHARS = 240;

/** The first sentence (or first line) of `instructions`, cut at a word within `SUMMARY_MAX_CHARS`; undefined when blank. */
export function summarizeInstructions(instructions: string | undefined, maxChars = SUMMARY_MAX_CHARS): string | undefined {
  if (instructions === undefined) return undefined;
  // The first paragraph or line: instructions often open with a heading or a one-line purpose.
  const firstBlock = instructions.trim().split(/\n\s*\n|\n/)[0]?.replace(/^#+\s*/, '').trim() ?? '';
  if (firstBlock === '') return undefined;
  // A sentence ends at . ! or ? followed by a space and more text (not "e.g. x" inside a word run).
  const sentence = /^(.+?[.!?])(?=\s+\S)/.exec(firstBlock)?.[1] ?? firstBlock;
  if (sentence.length <= maxChars) return sentence;
  const cut = sentence.slice(0, maxChars - 1);
  const atWord = cut.lastIndexOf(' ');
  return `${(atWord > maxChars / 2 ? cut.slice(0, atWord) : cut).trimEnd()}…`;
}
