/**
 * @module core/validation
 * Parsing untrusted input with zod and turning failures into QuiverErrors whose details
 * list every problem with its path, so a caller can fix all of them at once.
 */
import type { z } from 'zod';
import { invalidInput } from './errors.ts';

/** One problem found in an input, with a dotted path to the field. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** Flattens zod issues into `{path, message}` pairs. */
export function formatIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
}

/** Parses `input` with `schema` or throws an `invalid_input` QuiverError naming `what`. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = formatIssues(result.error);
  const summary = issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join('; ');
  throw invalidInput(`invalid ${what}: ${summary}`, { issues });
}

/** Parses JSON text, throwing an `invalid_input` QuiverError on malformed text. */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalidInput(`${what} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Deepest nesting of arrays and objects accepted in untrusted JSON (issue #18: 5,000 levels crashed a 500). */
export const MAX_JSON_DEPTH = 64;

/** True when `text` holds a NUL character, which PostgreSQL text and jsonb cannot store. */
export function hasNulCharacter(text: string): boolean {
  return text.includes('\u0000');
}

/**
 * The first reason a parsed JSON value is unsafe to pass on: a NUL character in a string or a
 * key (unless `allowNul`: text bound for a plugin, not for the database), or arrays / objects
 * nested deeper than `maxDepth`. Walks with an explicit stack, so a
 * value nested far too deep is reported rather than overflowing the call stack.
 */
export function findJsonHazard(value: unknown, maxDepth: number = MAX_JSON_DEPTH, options: { allowNul?: boolean } = {}): FieldIssue | undefined {
  const nulAllowed = options.allowNul === true;
  interface Frame {
    value: unknown;
    depth: number;
    key: string | number | undefined;
    parent: Frame | undefined;
  }
  const pathOf = (frame: Frame): string => {
    const keys: Array<string | number> = [];
    for (let at: Frame | undefined = frame; at?.key !== undefined; at = at.parent) keys.push(at.key);
    return keys.reverse().map(String).join('.') || '(root)';
  };
  const stack: Frame[] = [{ value, depth: 0, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const current = frame.value;
    if (typeof current === 'string') {
      if (!nulAllowed && hasNulCharacter(current)) return { path: pathOf(frame), message: 'contains a NUL character (\\u0000)' };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (frame.depth >= maxDepth) return { path: pathOf(frame), message: `nested deeper than ${maxDepth} levels` };
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) stack.push({ value: current[index], depth: frame.depth + 1, key: index, parent: frame });
      continue;
    }
    for (const [key, child] of Object.entries(current)) {
      if (!nulAllowed && hasNulCharacter(key)) return { path: pathOf(frame), message: 'has a key containing a NUL character (\\u0000)' };
      stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
    }
  }
  return undefined;
}

/** Throws an `invalid_input` QuiverError naming `what` when `value` holds a NUL character or nests too deep. */
export function assertJsonSafe(value: unknown, what: string, maxDepth: number = MAX_JSON_DEPTH): void {
  const issue = findJsonHazard(value, maxDepth);
  if (issue !== undefined) throw invalidInput(`invalid ${what}: ${issue.path}: ${issue.message}`, { issues: [issue] });
}

/**
 * A zod check for `superRefine`: adds one issue when the value holds a NUL character (unless
 * `allowNul`) or nests deeper than MAX_JSON_DEPTH, for boundaries that parse with zod directly.
 */
export function jsonSafetyCheck(options: { allowNul?: boolean } = {}): (value: unknown, context: z.RefinementCtx) => void {
  return (value, context) => {
    const issue = findJsonHazard(value, MAX_JSON_DEPTH, options);
    if (issue !== undefined) context.addIssue({ code: 'custom', message: `${issue.path}: ${issue.message}` });
  };
}
