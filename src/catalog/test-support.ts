/**
 * @module catalog/test-support
 * Assertions shared by the catalog's tests.
 */
import assert from 'node:assert/strict';
import { isQuiverError, type QuiverError } from '../core/errors.ts';

/** Asserts `promise` rejects with a QuiverError of `code`; returns it for further checks. */
export async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<QuiverError> {
  let caught: unknown;
  await assert.rejects(promise, (error) => {
    caught = error;
    return true;
  });
  assert.ok(isQuiverError(caught), `expected a QuiverError, got ${String(caught)}`);
  assert.equal(caught.code, code, `expected code ${code}, got ${caught.code}: ${caught.message}`);
  return caught;
}

/** The issue paths of an `invalid_input` error's details. */
export function issuePaths(error: QuiverError): string[] {
  const details = error.details as { issues?: { path: string }[] } | undefined;
  return (details?.issues ?? []).map((issue) => issue.path);
}
