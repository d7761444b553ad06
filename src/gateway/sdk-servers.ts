/**
 * @module gateway/sdk-servers
 * The MCP SDK's server stacks, loaded on first use (issue #28: idle memory). A server with no
 * MCP client yet needs neither: the 2026-07-28 server (`@modelcontextprotocol/server`, its own
 * bundled ajv with it, ~10 MB of RSS in a bare process) loads with the first sessionless POST to
 * `/mcp` or the first stdio connection; the 1.x SDK's `Server` (with `shared/protocol.js`, zod v3
 * and v4-mini, zod-to-json-schema: ~6 MB) with the first gateway session, and its Streamable
 * HTTP transport with the first 2025-era HTTP session. Each import runs once; later calls get
 * the loaded module.
 */
import type * as ModernSdk from '@modelcontextprotocol/server';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

let modern: Promise<typeof ModernSdk> | undefined;
let sessionServer: typeof Server | undefined;
let sessionTransport: typeof WebStandardStreamableHTTPServerTransport | undefined;

/** The SDK v2 server package (the 2026-07-28 revision's entry, `isLegacyRequest`, `Server`). */
export function modernSdk(): Promise<typeof ModernSdk> {
  return (modern ??= import('@modelcontextprotocol/server'));
}

/** The 1.x SDK's low-level `Server`, one per gateway session. */
export async function sessionServerClass(): Promise<typeof Server> {
  return (sessionServer ??= (await import('@modelcontextprotocol/sdk/server/index.js')).Server);
}

/** The 1.x SDK's Streamable HTTP server transport, one per 2025-era HTTP session. */
export async function sessionTransportClass(): Promise<typeof WebStandardStreamableHTTPServerTransport> {
  return (sessionTransport ??= (await import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')).WebStandardStreamableHTTPServerTransport);
}
