/**
 * @module api/http
 * Helpers every route module uses: typed context, JSON body parsing with zod, principal
 * and scope checks, and the single mapping from QuiverError to HTTP status.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { QuiverError, ErrorCodes, invalidInput, type ErrorCode } from '../core/errors.ts';
import { parseOrThrow } from '../core/validation.ts';
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

/** Reads and validates a JSON body; malformed JSON and schema violations become 400s. */
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
  return parseOrThrow(schema, body, what);
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
