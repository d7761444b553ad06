/**
 * @module intelligence/diff
 * A field-by-field diff of two intelligence documents (issue #14: `quiver pid diff`), so a
 * generated document can be reviewed against the current one before it is accepted. Tools are
 * compared by name, not position; each change carries its path, both values and, for the
 * generated side, the source the field came from.
 */
import { canonicalJson } from '../core/hash.ts';
import type { JsonObject, Provenance } from './types.ts';

/** One difference. */
export interface DocumentChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
  /** The source of the generated value (for added and changed fields). */
  source?: string | undefined;
}

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Tools keyed by name so that reordering is not a change. */
function normalized(document: JsonObject): JsonObject {
  const tools = Array.isArray(document['tools']) ? (document['tools'] as unknown[]) : [];
  const byName: JsonObject = {};
  for (const tool of tools) if (isObject(tool) && typeof tool['name'] === 'string') byName[tool['name']] = tool;
  return { ...document, tools: byName };
}

/** The source recorded for `path` or its nearest recorded ancestor. */
function sourceOf(path: string, provenance: Provenance): string | undefined {
  for (let at = path; at !== ''; at = at.includes('.') ? at.slice(0, at.lastIndexOf('.')) : '') {
    if (provenance[at] !== undefined) return provenance[at];
  }
  return undefined;
}

function walk(before: unknown, after: unknown, path: string, provenance: Provenance, changes: DocumentChange[]): void {
  // A whole new (or removed) object is listed field by field, each with its own source.
  if (isObject(before) && after === undefined) return walk(before, {}, path, provenance, changes);
  if (before === undefined && isObject(after)) return walk({}, after, path, provenance, changes);
  if (isObject(before) && isObject(after)) {
    for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
      walk(before[key], after[key], path === '' ? key : `${path}.${key}`, provenance, changes);
    }
    return;
  }
  if (before === undefined && after === undefined) return;
  if (before === undefined) changes.push({ path, kind: 'added', after, source: sourceOf(path, provenance) });
  else if (after === undefined) changes.push({ path, kind: 'removed', before });
  else if (canonicalJson(before) !== canonicalJson(after)) changes.push({ path, kind: 'changed', before, after, source: sourceOf(path, provenance) });
}

/** The changes from `current` to `generated` (an absent current document means everything is added). */
export function diffDocuments(current: JsonObject | undefined, generated: JsonObject, provenance: Provenance = {}): DocumentChange[] {
  const changes: DocumentChange[] = [];
  walk(current === undefined ? {} : normalized(current), normalized(generated), '', provenance, changes);
  return changes;
}
