/**
 * @module api/http
 * Helpers every route module uses: typed context, JSON body parsing with zod, principal
 * and scope checks, and the single mapping from QuiverError to HTTP status.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { QuiverError, invalidInput, type ErrorCode } from '../core/errors.ts';
import { assertJsonSafe, hasNulCharacter, parseOrThrow } from '../core/validation.ts';
import { requireScope, type ApiScope, type Principal } from '../access/api-keys.ts';

/** Variables the API middleware sets on every request. */
export interface ApiVariables {
  principal: Principal;
  requestId: string;
}

/** Hono environment of Quiver's API. */
export interface ApiEnv {
  Variables: ApiVariables;
}

/** An HTTP status Quiver answers errors with. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 502 | 503 | 504;

/** HTTP status of every error code: a `Record` over the closed union, so a new code must be mapped here. */
const STATUS_BY_CODE: Record<ErrorCode, ErrorStatus> = {
  invalid_input: 400,
  invalid_config: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  data_dir_locked: 409,
  missing_credential: 409,
  quarantined: 409,
  schema_too_new: 409,
  payload_too_large: 413,
  install_failed: 422,
  git_failed: 422,
  npm_failed: 422,
  rate_limited: 429,
  upstream_error: 502,
  unavailable: 503,
  circuit_open: 503,
  embedder_unavailable: 503,
  secret_unreadable: 503,
  embedder_failed: 502,
  timeout: 504,
  cancelled: 400,
  migration_changed: 500,
  internal: 500,
};

/** HTTP status for an error code. */
export function statusForCode(code: ErrorCode): ErrorStatus {
  return STATUS_BY_CODE[code];
}

/**
 * Reads and validates a JSON body; malformed JSON, NUL characters (in strings or keys), nesting
 * deeper than MAX_JSON_DEPTH and schema violations become 400s. The safety check runs before
 * zod, so no schema ever walks a 5,000-level body and no NUL reaches the database.
 */
export async function readJson<S extends z.ZodType>(c: Context<ApiEnv>, schema: S, what: string): Promise<z.output<S>> {
  const contentType = c.req.header('content-type') ?? '';
  if (!contentType.toLowerCase().includes('application/json')) {
    throw invalidInput(`${what}: send a JSON body with "Content-Type: application/json"`);
  }
  let body: unknown;
  try {
    body = await c.req.json();
  } catch (error) {
    if (error instanceof QuiverError) throw error;
    throw invalidInput(`${what}: the body is not valid JSON`);
  }
  assertJsonSafe(body, what);
  return parseOrThrow(schema, body, what);
}

/**
 * Refuses a request whose decoded path segments or query parameters (names and values) hold a
 * NUL character: PostgreSQL text cannot store one, so it would otherwise surface as a 500 deep
 * in a repository (issue #18, finding 7). Runs for every route, before any handler.
 */
export function assertSafeRequestTarget(url: string): void {
  const parsed = new URL(url);
  for (const segment of parsed.pathname.split('/')) {
    if (hasNulCharacter(segment) || hasNulCharacter(decodeSegment(segment))) {
      throw invalidInput('a path segment contains a NUL character (%00)');
    }
  }
  for (const [name, value] of parsed.searchParams) {
    if (hasNulCharacter(name) || hasNulCharacter(value)) throw invalidInput('a query parameter contains a NUL character (%00)');
  }
}

// Malformed escapes (`%E0%A4%A`) stay as they are, as Hono's own decoding leaves them.
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Validates query-string parameters. */
export function readQuery<S extends z.ZodType>(c: Context<ApiEnv>, schema: S): z.output<S> {
  return parseOrThrow(schema, c.req.query(), 'query parameters');
}

/** The authenticated caller, after checking it holds `scope`. */
export function principalWith(c: Context<ApiEnv>, scope: ApiScope): Principal {
  const principal = c.get('principal');
  requireScope(principal, scope);
  return principal;
}
