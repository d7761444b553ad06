/**
 * @module store/database-errors
 * The safety net under boundary validation (issue #18, finding 7): an engine error that blames
 * a statement's values — text with a NUL byte, an id that is not a UUID, a number out of
 * range, a statement too deep to plan — is the caller's mistake, so it leaves the store as an
 * `invalid_input` QuiverError (a 400), never as an internal error (a 500). Both engines report
 * the SQLSTATE as `error.code`. Other errors, constraint violations included (services turn
 * 23505 / 23503 into `conflict` themselves), pass through unchanged.
 */
import { QuiverError, ErrorCodes } from '../core/errors.ts';

// Class 22 data exception (22P02 invalid_text_representation, 22021 character_not_in_repertoire,
// 22P05 untranslatable_character, 22003 numeric_value_out_of_range, 22007 invalid_datetime_format…);
// 54000 program_limit_exceeded and 54001 statement_too_complex (a value nested too deep).
const INPUT_SQLSTATE = /^(22[0-9A-Z]{3}|54000|54001)$/;

/** The SQLSTATE of an engine error (or of the engine error a mapped QuiverError wraps), if any. */
export function sqlStateOf(error: unknown): string | undefined {
  if (error instanceof QuiverError) return error.cause === undefined ? undefined : sqlStateOf(error.cause);
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Maps an engine error that blames the statement's values to `invalid_input`; returns anything else as it is. */
export function mapDatabaseError(error: unknown): unknown {
  const sqlState = sqlStateOf(error);
  if (sqlState === undefined || !INPUT_SQLSTATE.test(sqlState)) return error;
  // The engine's message may quote the refused value (`invalid input syntax for type uuid: "…"`);
  // the client gets the SQLSTATE only, so no stored or secret text is ever echoed.
  return new QuiverError(ErrorCodes.invalidInput, `the database refused a value of this request (SQLSTATE ${sqlState})`, {
    details: { sqlState },
    cause: error,
  });
}
