/**
 * @module core/bearer-challenge
 * The `WWW-Authenticate` header of a 401 (RFC 6750 §3): `Bearer realm="quiver"` when the
 * request carried no key, plus `error="invalid_token"` and a description when it carried
 * one that is not valid (§3.1: no error code when no credentials were sent). Shared by the
 * REST API and the MCP endpoint, so every 401 tells a client the same way how to authenticate.
 * With an authorization server configured (issue #27) the challenge also names Quiver's
 * protected resource metadata (RFC 9728 §5.1, `resource_metadata`), where an MCP client starts
 * the OAuth flow; a 403 for a missing scope says `insufficient_scope` and the scope (§3.1).
 */

/** The JSON-RPC error code of an HTTP-level refusal on `/mcp`: the SDK's Streamable HTTP transport uses -32000 for these (id null). */
export const JSON_RPC_HTTP_ERROR = -32000;

/** Extra parameters of a challenge. */
export interface ChallengeParameters {
  /** The URL of the protected resource metadata (RFC 9728). */
  resourceMetadata?: string | undefined;
}

// A quoted-string may not hold `"` or `\` unescaped (RFC 7230 §3.2.6); our texts are ours, keep them plain.
function quoted(text: string): string {
  return `"${text.replace(/["\\]/g, "'").replace(/[\r\n]/g, ' ')}"`;
}

function metadataParameter(parameters: ChallengeParameters): string {
  return parameters.resourceMetadata ? `, resource_metadata=${quoted(parameters.resourceMetadata)}` : '';
}

/** The challenge for a 401; `keyPresented` says whether the request carried a key at all. */
export function bearerChallenge(keyPresented: boolean, description?: string, parameters: ChallengeParameters = {}): string {
  if (!keyPresented) return `Bearer realm="quiver"${metadataParameter(parameters)}`;
  const text = description ?? 'the API key is invalid or revoked';
  return `Bearer realm="quiver"${metadataParameter(parameters)}, error="invalid_token", error_description=${quoted(text)}`;
}

/** The challenge for a 403: `insufficient_scope` with the scope needed when one is named (RFC 6750 §3.1). */
export function forbiddenChallenge(description: string, parameters: ChallengeParameters & { scope?: string | undefined } = {}): string {
  const scope = parameters.scope ? `, error="insufficient_scope", scope=${quoted(parameters.scope)}` : '';
  return `Bearer realm="quiver"${metadataParameter(parameters)}${scope}, error_description=${quoted(description)}`;
}
