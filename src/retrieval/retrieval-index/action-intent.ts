/**
 * @module retrieval/retrieval-index/action-intent
 * Removal tools yield to requests that do not ask for removal. A catalog's removal tools share
 * their nouns with the tools that add the same things (server-memory's `delete_observations`
 * and `add_observations`), so a request that only names the thing ("remember a fact about a
 * person") matched both alike, and the shorter description (usually the deleting one) won on
 * BM25 length normalisation. A tool removes when its name has a removal verb or its description
 * starts with one; MCP annotations only veto it (`readOnlyHint: true` or `destructiveHint:
 * false`), because `destructiveHint: true` also marks writers that overwrite (server-filesystem's
 * `write_file`, `edit_file`, `move_file`), which a request to save something should still find.
 * Fail open: a request with a removal word of its own, which every request naming such a tool
 * has, demotes nothing, and demotion only scales a score, so no tool is hidden.
 */
import type { RetrievalDocument } from '../document.ts';
import type { WeightedTerm } from '../lexical-index.ts';
import { stem, terms } from '../tokenizer.ts';

/** Verbs that make a tool a removal tool when its name has one or its description starts with one. */
const removalVerbs = [
  'delete', 'remove', 'erase', 'drop', 'destroy', 'purge', 'revoke', 'kill', 'wipe', 'trash',
  'discard', 'uninstall', 'unsubscribe', 'unregister', 'unlink', 'truncate', 'terminate',
];
/** Words by which a request asks for removal: the verbs above and how people say it otherwise. */
const removalRequestWords = [
  ...removalVerbs, 'forget', 'clear', 'cancel', 'rid', 'undo', 'deactivate', 'disable', 'clean',
  'prune', 'expunge', 'eliminate', 'scrap', 'dismiss', 'retract', 'withdraw', 'unfollow', 'evict',
];
const removalStems: ReadonlySet<string> = new Set(removalVerbs.map(stem));
const requestStems: ReadonlySet<string> = new Set(removalRequestWords.map(stem));

/** True when the document is a removal tool (see the module comment). */
export function isRemovalTool(document: RetrievalDocument): boolean {
  const hints = document.actionHints;
  if (hints?.readOnly === true || hints?.destructive === false) return false;
  if (terms(document.name).some((term) => removalStems.has(term))) return true;
  const first = terms(document.description)[0];
  return first !== undefined && removalStems.has(first);
}

/** Positions of the removal tools, or undefined when the catalog has none. */
export function findRemovalTools(documents: readonly RetrievalDocument[]): Int32Array | undefined {
  const positions: number[] = [];
  documents.forEach((document, i) => {
    if (isRemovalTool(document)) positions.push(i);
  });
  return positions.length > 0 ? Int32Array.from(positions) : undefined;
}

/** True when the request's own (unexpanded) terms ask for removal. */
export function asksForRemoval(ownTerms: readonly WeightedTerm[]): boolean {
  return ownTerms.some(({ term }) => requestStems.has(term));
}

/** Scales the removal tools' scores by 1 − penalty unless the request asks for removal. */
export function demoteRemovalTools(scores: Float32Array, removalTools: Int32Array, ownTerms: readonly WeightedTerm[], penalty: number): void {
  if (penalty <= 0 || asksForRemoval(ownTerms)) return;
  const factor = 1 - penalty;
  for (const d of removalTools) scores[d]! *= factor;
}
