/**
 * @module test/helpers/modern-post
 * One raw 2026-07-28 MCP request over Streamable HTTP, for tests whose client capabilities vary
 * per request or that use a method the v2 client library has no API for (the Tasks extension):
 * the protocol headers (`mcp-name` from the params' `name`, else `taskId`), the `_meta` that
 * carries the protocol version, client info and capabilities, and the answer read from either
 * a JSON body or the first SSE `data:` line.
 */

/** The 2026 protocol version the raw requests speak. */
export const MODERN = '2026-07-28';

/** The HTTP status and the JSON-RPC result or error. */
export type ModernAnswer = { status: number; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

/** Posts `method` with `params` to `url` as the holder of `key`, declaring `capabilities`; `headers` are added last. */
export async function postModern(
  url: string | URL,
  key: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown>,
  options: { headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ModernAnswer> {
  const name = typeof params['name'] === 'string' ? params['name'] : typeof params['taskId'] === 'string' ? params['taskId'] : undefined;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
      ...options.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': capabilities } },
    }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
  });
  const raw = await response.text();
  const json = raw.startsWith('{') ? raw : (raw.split('\n').find((line) => line.startsWith('data: ')) ?? 'data: {}').slice(6);
  return { status: response.status, ...(JSON.parse(json) as Pick<ModernAnswer, 'result' | 'error'>) };
}
