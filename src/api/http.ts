/**
 * @module api/http
 * Helpers every route module uses: typed context, JSON body parsing with zod, principal
 * and scope checks, and the single mapping from QuiverError to HTTP status.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { QuiverError, ErrorCodes, invalidInput, type ErrorCode } from '../core/errors.ts';
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

/** HTTP status for an error code. */
export function statusForCode(code: ErrorCode): 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 503 | 504 {
  switch (code) {
    case 'install_failed':
      return 422;
    case 'missing_credential':
      return 409;
    case ErrorCodes.invalidInput:
    case ErrorCodes.config:
      return 400;
    case ErrorCodes.unauthorized:
      return 401;
    case ErrorCodes.forbidden:
      return 403;
    case ErrorCodes.notFound:
      return 404;
    case ErrorCodes.conflict:
    case ErrorCodes.dataDirLocked:
      return 409;
    case ErrorCodes.payloadTooLarge:
      return 413;
    case ErrorCodes.rateLimited:
      return 429;
    case ErrorCodes.unavailable:
    case ErrorCodes.circuitOpen:
      return 503;
    case ErrorCodes.timeout:
      return 504;
    default:
      return 500;
  }
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
