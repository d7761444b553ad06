/**
 * @module cli/did-you-mean
 * "Did you mean …?" for a mistyped command, plugin or workspace (issue #26): the nearest known
 * name by edit distance (a swap of two neighbouring letters counts as one edit), when it is near
 * enough to be a typo rather than a different word.
 */
import { QuiverError } from '../core/errors.ts';
import type { App } from '../app.ts';

/** Edit distance with adjacent transpositions (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate nearest to `input` if it is within a typo's reach (a third of its length, at least 1, at most 3); else undefined. */
export function closestMatch(input: string, candidates: Iterable<string>): string | undefined {
  const wanted = input.toLowerCase();
  const limit = Math.min(3, Math.max(1, Math.floor(wanted.length / 3)));
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    if (name === input) continue;
    const distance = editDistance(wanted, name.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Names a not-found entity could have meant, by the `what` of `notFound(what, id)`. */
const CANDIDATES: Record<string, (app: App) => Promise<string[]>> = {
  plugin: async (app) => (await app.plugins.list()).map((plugin) => plugin.name),
  workspace: async (app) => (await app.plugins.listWorkspaces()).map((workspace) => workspace.name),
};

/** `error` with "did you mean 'X'?" added when it is a missing plugin or workspace and a near name exists; else `error`. */
export async function withSuggestion(error: QuiverError, app: App | undefined): Promise<QuiverError> {
  if (error.code !== 'not_found' || app === undefined) return error;
  const details = error.details as { what?: unknown; id?: unknown } | undefined;
  const candidates = typeof details?.what === 'string' ? CANDIDATES[details.what] : undefined;
  if (candidates === undefined || typeof details?.id !== 'string') return error;
  // A suggestion is a courtesy: failing to find one must not change the error.
  const near = closestMatch(details.id, await candidates(app).catch(() => []));
  if (near === undefined) return error;
  return new QuiverError(error.code, `${error.message}; did you mean '${near}'?`, { details: { ...details, suggestion: near }, cause: error });
}
