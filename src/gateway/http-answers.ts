/**
 * @module gateway/http-answers
 * The `/mcp` endpoint's own HTTP answers, given before or instead of the SDK's: JSON-RPC errors
 * without a request id, the 503 overload refusal with `Retry-After` (issue #18: a full or busy
 * gateway refuses rather than evicting another tenant or making clients wait), and the Host and
 * Origin check against an allow-list (DNS-rebinding protection, MCP transport spec).
 */
import { overloadRetryAfter } from './admission.ts';
import { OVERLOADED_ERROR_CODE } from './errors.ts';

/** Hostnames allowed by default: loopback only. */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '[::1]'];

/** A JSON-RPC error body without a request id (an HTTP-level refusal). */
function jsonRpcErrorBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

export function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(jsonRpcErrorBody(code, message), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** The JSON-RPC body of an overload refusal (also written by the host's front pacing). */
export function overloadedBody(message: string): string {
  return jsonRpcErrorBody(OVERLOADED_ERROR_CODE, message);
}

/** 503 with Retry-After: the gateway is full or overloaded; the client should come back later. */
export function overloadedResponse(message: string, retryAfterSeconds: number): Response {
  return jsonRpcError(503, OVERLOADED_ERROR_CODE, message, { 'retry-after': String(retryAfterSeconds) });
}

/** The overload refusal for an error that is one (admission, the turn gate); any other error is thrown again. */
export function overloadAnswerOrThrow(error: unknown): Response {
  const retryAfterSeconds = overloadRetryAfter(error);
  if (retryAfterSeconds !== undefined) return overloadedResponse((error as Error).message, retryAfterSeconds);
  throw error;
}

function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return undefined;
  }
}

/** Checks Host and Origin against the allow-lists; returns the refusal, or undefined. */
export function checkRequestOrigin(request: Request, allowedHosts: readonly string[], allowedOrigins?: readonly string[]): Response | undefined {
  const host = request.headers.get('host') ?? new URL(request.url).host;
  const hostname = hostnameOf(host);
  if (!hostname || !allowedHosts.includes(hostname)) return jsonRpcError(403, -32000, `Forbidden: host '${host}' is not allowed`);
  const origin = request.headers.get('origin');
  if (origin !== null) {
    let allowed: boolean;
    if (allowedOrigins) allowed = allowedOrigins.includes(origin);
    else {
      try {
        allowed = allowedHosts.includes(new URL(origin).hostname);
      } catch {
        allowed = false;
      }
    }
    if (!allowed) return jsonRpcError(403, -32000, `Forbidden: origin '${origin}' is not allowed`);
  }
  return undefined;
}
