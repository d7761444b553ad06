/**
 * @module plugins/oauth/client-metadata
 * Quiver's OAuth Client ID Metadata Document (issue #27; draft-ietf-oauth-client-id-metadata-document,
 * the 2026-07-28 MCP revision's preference over Dynamic Client Registration). When the admin
 * configures Quiver's public https base URL (`QUIVER_PUBLIC_URL`), Quiver serves this document
 * at a stable URL under it, and that URL is Quiver's `client_id` at every authorization server
 * that advertises `client_id_metadata_document_supported`: nothing is registered, nothing is
 * stored per server. Without a public https URL, or at a server that does not advertise it,
 * Quiver registers dynamically as before (the SDK's `auth()` makes that choice).
 */

/** Where the document is served, under the public base URL. */
export const CLIENT_METADATA_PATH = '/api/v1/oauth/client-metadata.json';
/** Where the admin UI's authorization responses come back, under the public base URL. */
export const BROWSER_CALLBACK_PATH = '/api/v1/oauth/callback';

/** The document's URL (Quiver's client_id), or undefined when no public https base URL is configured. */
export function clientMetadataUrl(publicUrl: string | undefined): string | undefined {
  if (publicUrl === undefined || !publicUrl.startsWith('https://')) return undefined;
  return `${publicUrl.replace(/\/+$/, '')}${CLIENT_METADATA_PATH}`;
}

/** Quiver's client_id document URL and the redirect URIs it lists, or undefined without a public https URL. */
export function clientMetadataFor(publicUrl: string | undefined): { url: string; redirectUris: string[] } | undefined {
  const url = clientMetadataUrl(publicUrl);
  return url === undefined ? undefined : { url, redirectUris: clientMetadataDocument(publicUrl!)['redirect_uris'] as string[] };
}

/** The document itself: a public client (PKCE, no secret) redirected to the admin UI's callback. */
export function clientMetadataDocument(publicUrl: string): Record<string, unknown> {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    client_id: `${base}${CLIENT_METADATA_PATH}`,
    client_name: 'Quiver',
    client_uri: `${base}/`,
    redirect_uris: [`${base}${BROWSER_CALLBACK_PATH}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}
