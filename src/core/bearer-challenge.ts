/**
 * @module core/bearer-challenge
 * The `WWW-Authenticate` header of a 401 (RFC 6750 §3): `Bearer realm="quiver"` when the
 * request carried no key, plus `error="invalid_token"` and a description when it carried
 * one that is not valid (§3.1: no error code when no credentials were sent). Shared by the
 * REST API and the MCP endpoint, so every 401 tells a client the same way how to authenticate.
 */

/** The JSON-RPC error code of an HTTP-level refusal on `/mcp`: the SDK's Streamable HTTP transport uses -32000 for these (id null). */
export const JSON_RPC_HTTP_ERROR = -32000;

/** The challenge for a 401; `keyPresented` says whether the request carried a key at all. */
export function bearerChallenge(keyPresented: boolean, description?: string): string {
  if (!keyPresented) return 'Bearer realm="quiver"';
  // A quoted-string may not hold `"` or `\` unescaped (RFC 7230 §3.2.6); the description is ours, keep it plain.
  const text = (description ?? 'the API key is invalid or revoked').replace(/["\\]/g, "'");
  return `Bearer realm="quiver", error="invalid_token", error_description="${text}"`;
}
