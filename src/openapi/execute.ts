/**
 * @module openapi/execute
 * Executes one OpenAPI tool call over HTTP (issue #14): credentials from the plugin's secrets
 * (security.ts), the request built from the arguments (request.ts), sent with fetch under a
 * timeout, and the response turned into a tool result (response.ts). Egress is the base URL's
 * origin only: a request for any other origin is refused before it is sent, and redirects are
 * followed by hand, only within that origin (at most 5). Every hop goes through the address
 * guard (address-guard.ts): loopback, private, link-local and the hub's own addresses are
 * refused before connecting unless an admin allowed that exact destination.
 *
 * An HTTP error status is the API's answer, so it is a tool result with `isError: true`. An API
 * that cannot be reached or does not answer in time throws `OpenApiCallError`, which the
 * in-process server reports as a request failure, so the plugin's breaker counts it.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError, isQuiverError } from '../core/errors.ts';
import { buildRequest } from './request.ts';
import { BodyTooLargeError, readBounded } from './bounded-body.ts';
import { RESPONSE_LIMIT, toToolResult } from './response.ts';
import { applyCredentials } from './security.ts';
import { createGuardedFetch, type AddressGuardOptions } from './address-guard.ts';
import type { OpenApiToolDefinition, SecurityScheme } from './types.ts';

/** Settings shared by every call of one API. */
export interface ExecuteSettings {
  /** The API root every operation path is appended to, e.g. `https://api.example.com/v2`. */
  baseUrl: string;
  securitySchemes: Record<string, SecurityScheme>;
  /** Secret values by name (see security.ts for the names). */
  credentials: Record<string, string>;
  /** Time allowed for the whole call, ms (default 30 s). */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Who may be reached beyond public addresses (address-guard.ts); every call goes through the guard. */
  guard?: AddressGuardOptions;
  /** Replaces the guarded fetch (unit tests of request building only). */
  fetch?: typeof fetch;
}

const MAX_REDIRECTS = 5;

/** The API could not be reached, answered too slowly, or broke a rule (another host, too large). */
export class OpenApiCallError extends QuiverError {}

function redactorFor(credentials: Record<string, string>): (text: string) => string {
  const secrets = Object.values(credentials)
    .filter((value) => value.length >= 4)
    .sort((a, b) => b.length - a.length);
  return (text) => secrets.reduce((out, secret) => out.split(secret).join('[redacted]'), text);
}

/** Sends the request, following same-origin redirects by hand. */
async function send(request: ReturnType<typeof buildRequest>, origin: string, signal: AbortSignal, fetchImpl: typeof fetch): Promise<Response> {
  let { url, method, body } = request;
  for (let hop = 0; ; hop += 1) {
    if (url.origin !== origin) {
      throw new OpenApiCallError(ErrorCodes.forbidden, `refused: ${url.origin} is not the API's host (${origin}); an OpenAPI plugin may only reach its base URL's host`);
    }
    const response = await fetchImpl(url, { method, headers: request.headers, body: body ?? null, redirect: 'manual', signal });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) return response;
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new OpenApiCallError(ErrorCodes.upstreamError, `the API redirected more than ${MAX_REDIRECTS} times`);
    url = new URL(location, url);
    if (response.status !== 307 && response.status !== 308) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
      request.headers.delete('content-type');
    }
  }
}

/** Calls one operation; resolves to the tool result, or throws OpenApiCallError / `invalid_input`. */
export async function executeOperation(tool: OpenApiToolDefinition, args: Record<string, unknown>, settings: ExecuteSettings, signal?: AbortSignal): Promise<CallToolResult> {
  const baseUrl = new URL(settings.baseUrl);
  const redact = redactorFor(settings.credentials);
  const auth = applyCredentials(tool.operation.security, settings.securitySchemes, settings.credentials);
  if ('missing' in auth) {
    return {
      isError: true,
      content: [{ type: 'text', text: `'${tool.name}' needs credentials that are not set: ${auth.missing.join(', ')} (set them with 'quiver plugin secret set PLUGIN NAME')` }],
    };
  }
  const request = buildRequest(baseUrl, tool, args, auth.applied);
  const timeoutMs = settings.timeoutMs ?? 30_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const label = `${request.method} ${tool.operation.path}`;
  try {
    const response = await send(request, baseUrl.origin, combined, settings.fetch ?? createGuardedFetch(settings.guard));
    const body = await readBounded(response, settings.maxResponseBytes ?? RESPONSE_LIMIT);
    return toToolResult({
      status: response.status,
      statusText: response.statusText,
      contentType: response.headers.get('content-type') ?? '',
      body,
      label,
      wrapsResult: tool.operation.wrapsResult,
      redact,
    });
  } catch (error) {
    if (isQuiverError(error)) throw error;
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted) throw new OpenApiCallError(ErrorCodes.timeout, `${label} did not answer within ${timeoutMs} ms`);
    if (error instanceof BodyTooLargeError) throw new OpenApiCallError(ErrorCodes.payloadTooLarge, `${label}: the API's response is ${error.message}`);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new OpenApiCallError(ErrorCodes.unavailable, redact(`cannot reach the API for ${label}: ${cause?.code ?? cause?.message ?? (error as Error).message}`));
  }
}
