/**
 * @module core/errors
 * One error type for the whole of Quiver. Each front maps it to its wire format in one place:
 * HTTP (status + `{error: {code, message, details}}`), MCP (InvalidParams / isError /
 * InternalError) and the CLI (exit codes).
 */

/** How an error should be treated: a caller's mistake, a passing fault, or a bug. */
export type ErrorKind = 'user' | 'operational' | 'unexpected';

/**
 * Every error code, closed: a code not listed here does not compile, and each front maps
 * every code through a `Record<ErrorCode, …>` (HTTP status, MCP wire form, CLI exit code), so a
 * new code cannot fall through to a 500 unnoticed.
 */
export const ErrorCodes = {
  invalidInput: 'invalid_input',
  notFound: 'not_found',
  conflict: 'conflict',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  payloadTooLarge: 'payload_too_large',
  rateLimited: 'rate_limited',
  timeout: 'timeout',
  unavailable: 'unavailable',
  circuitOpen: 'circuit_open',
  dataDirLocked: 'data_dir_locked',
  config: 'invalid_config',
  installFailed: 'install_failed',
  missingCredential: 'missing_credential',
  /** A tool whose served definition changed after approval (issue #10 tool pinning). */
  quarantined: 'quarantined',
  upstreamError: 'upstream_error',
  cancelled: 'cancelled',
  gitFailed: 'git_failed',
  npmFailed: 'npm_failed',
  embedderFailed: 'embedder_failed',
  embedderUnavailable: 'embedder_unavailable',
  migrationChanged: 'migration_changed',
  schemaTooNew: 'schema_too_new',
  secretUnreadable: 'secret_unreadable',
  internal: 'internal',
} as const;

/** A Quiver error code. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Every error code, for exhaustive tables and their tests. */
export const ALL_ERROR_CODES: readonly ErrorCode[] = Object.values(ErrorCodes);

export interface QuiverErrorOptions {
  kind?: ErrorKind;
  details?: unknown;
  cause?: unknown;
}

const defaultKinds: Record<ErrorCode, ErrorKind> = {
  invalid_input: 'user',
  not_found: 'user',
  conflict: 'user',
  unauthorized: 'user',
  forbidden: 'user',
  payload_too_large: 'user',
  invalid_config: 'user',
  data_dir_locked: 'user',
  rate_limited: 'operational',
  timeout: 'operational',
  unavailable: 'operational',
  circuit_open: 'operational',
  upstream_error: 'operational',
  install_failed: 'user',
  missing_credential: 'user',
  quarantined: 'user',
  cancelled: 'user',
  git_failed: 'user',
  npm_failed: 'user',
  embedder_failed: 'operational',
  embedder_unavailable: 'operational',
  migration_changed: 'unexpected',
  schema_too_new: 'user',
  secret_unreadable: 'operational',
  internal: 'unexpected',
};

/** The error every Quiver layer throws. `code` is machine-readable; `message` says what to fix. */
export class QuiverError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: QuiverErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'QuiverError';
    this.code = code;
    this.kind = options.kind ?? defaultKinds[code];
    this.details = options.details;
  }

  /** A plain object safe to send to a client (no stack, no cause). */
  toJSON(): { code: string; message: string; details?: unknown } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** True when `error` is a QuiverError (optionally with the given code). */
export function isQuiverError(error: unknown, code?: ErrorCode | (string & {})): error is QuiverError {
  return error instanceof QuiverError && (code === undefined || error.code === code);
}

/** Wraps anything thrown into a QuiverError, keeping QuiverErrors as they are. */
export function toQuiverError(error: unknown, fallbackMessage = 'unexpected error'): QuiverError {
  if (error instanceof QuiverError) return error;
  const message = error instanceof Error ? error.message : fallbackMessage;
  return new QuiverError(ErrorCodes.internal, message, { cause: error, kind: 'unexpected' });
}

/** Shorthand for a user-input error. */
export function invalidInput(message: string, details?: unknown): QuiverError {
  return new QuiverError(ErrorCodes.invalidInput, message, { details });
}

/** Shorthand for a missing entity. */
export function notFound(what: string, id: string): QuiverError {
  return new QuiverError(ErrorCodes.notFound, `${what} '${id}' was not found`, { details: { what, id } });
}
