/**
 * @module trust/pinning/diff
 * The readable difference between an approved and a served tool definition, shown before an
 * admin approves it: text parts (title, description) as a word diff, schemas and annotations
 * as the JSON paths added, removed or changed.
 */
import { canonicalJson } from '../../core/hash.ts';
import { changedParts, DEFINITION_PARTS, type ToolDefinition } from './definition.ts';

/** One run of a word diff: kept, removed (approved only) or added (served only). */
export interface TextChange {
  op: 'same' | 'removed' | 'added';
  text: string;
}

/** One JSON path whose value differs. */
export interface JsonChange {
  path: string;
  op: 'added' | 'removed' | 'changed';
  approved?: unknown;
  served?: unknown;
}

/** The diff of one part of the definition. */
export type PartDiff =
  | { part: string; kind: 'text'; approved: string | null; served: string | null; changes: TextChange[] }
  | { part: string; kind: 'json'; changes: JsonChange[] };

// Word diffs are quadratic; very long texts are compared as one block instead.
const MAX_WORDS = 2_000;

/** A word-level diff (longest common subsequence), adjacent runs merged. */
export function diffText(approved: string, served: string): TextChange[] {
  const a = approved.split(/(\s+)/).filter((token) => token !== '');
  const b = served.split(/(\s+)/).filter((token) => token !== '');
  if (a.length > MAX_WORDS || b.length > MAX_WORDS) {
    return approved === served ? [{ op: 'same', text: approved }] : [{ op: 'removed', text: approved }, { op: 'added', text: served }];
  }
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const out: TextChange[] = [];
  const push = (op: TextChange['op'], text: string): void => {
    const last = out[out.length - 1];
    if (last !== undefined && last.op === op) last.text += text;
    else out.push({ op, text });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push('same', a[i]!);
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) push('removed', a[i++]!);
    else push('added', b[j++]!);
  }
  while (i < a.length) push('removed', a[i++]!);
  while (j < b.length) push('added', b[j++]!);
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The JSON paths where two values differ (objects by key, anything else as a whole). */
export function diffJson(approved: unknown, served: unknown, path = ''): JsonChange[] {
  if (isObject(approved) && isObject(served)) {
    const keys = [...new Set([...Object.keys(approved), ...Object.keys(served)])].sort();
    return keys.flatMap((key) => {
      const at = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!(key in served)) return [{ path: at, op: 'removed' as const, approved: approved[key] }];
      if (!(key in approved)) return [{ path: at, op: 'added' as const, served: served[key] }];
      return diffJson(approved[key], served[key], at);
    });
  }
  if (canonicalJson(approved) === canonicalJson(served)) return [];
  if (approved === undefined) return [{ path: path || '/', op: 'added', served }];
  if (served === undefined) return [{ path: path || '/', op: 'removed', approved }];
  return [{ path: path || '/', op: 'changed', approved, served }];
}

/** Every changed part of a definition, diffed (approved null: a new tool, everything is added). */
export function diffDefinitions(approved: ToolDefinition | null, served: ToolDefinition): PartDiff[] {
  const before: ToolDefinition = approved ?? { name: '', inputSchema: {} };
  const parts: readonly string[] = approved === null ? DEFINITION_PARTS.filter((part) => served[part] !== undefined) : changedParts(approved, served);
  return parts.map((part): PartDiff => {
    const a = before[part as keyof ToolDefinition];
    const b = served[part as keyof ToolDefinition];
    if (part === 'name' || part === 'title' || part === 'description') {
      const approvedText = approved === null || typeof a !== 'string' ? null : a;
      const servedText = typeof b === 'string' ? b : null;
      return { part, kind: 'text', approved: approvedText, served: servedText, changes: diffText(approvedText ?? '', servedText ?? '') };
    }
    return { part, kind: 'json', changes: diffJson(approved === null ? undefined : a, b) };
  });
}

/** A diff as plain text lines (the CLI's view): `-` approved, `+` served. */
export function formatDiff(diff: readonly PartDiff[]): string[] {
  const lines: string[] = [];
  for (const part of diff) {
    lines.push(`  ${part.part}:`);
    if (part.kind === 'text') {
      if (part.approved !== null) lines.push(`    - ${part.approved}`);
      if (part.served !== null) lines.push(`    + ${part.served}`);
      continue;
    }
    for (const change of part.changes) {
      if (change.op !== 'added') lines.push(`    - ${change.path}: ${canonicalJson(change.approved)}`);
      if (change.op !== 'removed') lines.push(`    + ${change.path}: ${canonicalJson(change.served)}`);
    }
  }
  return lines;
}
