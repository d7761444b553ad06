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
