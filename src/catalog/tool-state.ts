/**
 * @module catalog/tool-state
 * Pure helpers over a tool's editable state: building it from input, hashing it, listing the
 * fields two states differ in, and the version snapshot format (seed 001 §4.2 table 5, §6.10).
 */
import { z } from 'zod';
import { toolContentHash, toolStatusSchema, type ToolInput } from '../core/tool.ts';
import { TOOL_STATE_FIELDS, type StoredToolSummary, type ToolState } from '../store/repositories/tools.ts';

/** The state fields covered by the content hash; the others change a tool without re-embedding it. */
const CONTENT_FIELDS: ReadonlySet<keyof ToolState> = new Set([
  'name', 'description', 'parameters', 'summary', 'tags', 'whenToUse', 'whenNotToUse', 'exampleQueries',
]);

/** A tool's state from parsed input and its resolved category. */
export function toolStateFromInput(input: ToolInput, categoryId: string | null): ToolState {
  return {
    name: input.name,
    displayName: input.displayName ?? null,
    orgId: input.orgId ?? null,
    categoryId,
    description: input.description,
    parameters: input.parameters,
    returnSchema: input.returnSchema ?? null,
    annotations: input.annotations,
    summary: input.summary ?? null,
    tags: input.tags,
    whenToUse: input.whenToUse,
    whenNotToUse: input.whenNotToUse,
    exampleQueries: input.exampleQueries,
    metadata: input.metadata,
    isAlwaysPinned: input.isAlwaysPinned,
    pinWeight: input.pinWeight,
    status: input.status,
    schemaVersion: input.schemaVersion,
  };
}

/** The state part of a stored record. */
export function toolStateOf(record: ToolState): ToolState {
  const state = {} as Record<keyof ToolState, unknown>;
  for (const field of TOOL_STATE_FIELDS) state[field] = record[field];
  return state as unknown as ToolState;
}

/** The content hash of a state (core/tool.ts `toolContentHash`). */
export function hashToolState(state: ToolState): string {
  return toolContentHash(state);
}

/** The fields `after` changes relative to `before`, in `TOOL_STATE_FIELDS` order. */
export function changedToolFields(before: ToolState, after: ToolState): (keyof ToolState)[] {
  return TOOL_STATE_FIELDS.filter((field) => !jsonEqual(before[field], after[field]));
}

const UNHASHED_FIELDS = TOOL_STATE_FIELDS.filter((field) => !CONTENT_FIELDS.has(field)) as (keyof StoredToolSummary & keyof ToolState)[];

/**
 * The fields outside the content hash that `after` changes: what differential sync compares
 * when the hashes are equal (a summary row has no hashed columns to compare).
 */
export function changedUnhashedFields(before: StoredToolSummary, after: ToolState): (keyof ToolState)[] {
  return UNHASHED_FIELDS.filter((field) => !jsonEqual(before[field], after[field]));
}

/** Deep equality of JSON values, ignoring object key order (as jsonb and the content hash do). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, index) => jsonEqual(item, other[index]));
  }
  const left = Object.entries(a as Record<string, unknown>).filter(([, value]) => value !== undefined);
  const right = b as Record<string, unknown>;
  const rightCount = Object.values(right).filter((value) => value !== undefined).length;
  return left.length === rightCount && left.every(([key, value]) => Object.hasOwn(right, key) && jsonEqual(value, right[key]));
}

/** True when `after` raises the major part of a semver `before` (seed 001 §9.3: flag for review). */
export function isMajorBump(before: string, after: string): boolean {
  const major = (version: string) => Number.parseInt(version.split('.')[0] ?? '', 10);
  const from = major(before);
  const to = major(after);
  return Number.isFinite(from) && Number.isFinite(to) && to > from;
}

const jsonObject = z.record(z.string(), z.unknown());

/**
 * A version snapshot as stored in `tool_versions.snapshot`: the tool's state, its content hash
 * and category name at that version, and `deletedAt` on the version a deletion wrote.
 */
export const toolSnapshotSchema = z.object({
  name: z.string(),
  displayName: z.string().nullable(),
  orgId: z.string().nullable(),
  categoryId: z.string().nullable(),
  categoryName: z.string().nullable().default(null),
  description: z.string(),
  parameters: jsonObject,
  returnSchema: jsonObject.nullable(),
  annotations: jsonObject,
  summary: z.string().nullable(),
  tags: z.array(z.string()),
  whenToUse: z.array(z.string()),
  whenNotToUse: z.array(z.string()),
  exampleQueries: z.array(z.string()),
  metadata: jsonObject,
  isAlwaysPinned: z.boolean(),
  pinWeight: z.number().int(),
  status: toolStatusSchema,
  schemaVersion: z.string(),
  contentHash: z.string(),
  deletedAt: z.string().nullable().optional(),
});
/** A parsed version snapshot. */
export type ToolSnapshot = z.output<typeof toolSnapshotSchema>;

/** The snapshot to store for a state. */
export function snapshotOf(state: ToolState, contentHash: string, categoryName: string | null): ToolSnapshot {
  return { ...toolStateOf(state), categoryName, contentHash };
}
