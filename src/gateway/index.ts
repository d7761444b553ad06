/**
 * @module gateway
 * The MCP server front: one endpoint for every enabled tool, behind search, with bounded
 * per-session tool context, a loop guard and outcome capture (DESIGN §3.8, seed 004).
 * Public surface; the test backend lives under `./testing/` and is not exported here.
 */
export * from './backend.ts';
export { createGateway, type CreateGatewayOptions, type Gateway, type GatewayOptions, type GatewaySession } from './gateway.ts';
export { runStdioGateway, type RunStdioGatewayOptions, type StdioGateway } from './stdio.ts';
export { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions } from './http.ts';
export { checkRequestOrigin, LOOPBACK_HOSTS } from './http-answers.ts';
export { UPSTREAM_ERROR } from './errors.ts';
export { ToolContext } from './tool-context.ts';
export { IterationGuard, hashArguments, normalizeArguments } from './iteration-guard.ts';
export { SearchHistory } from './search-history.ts';
export { DEFAULT_WORKSPACE, MCP_STDIO_OPTIONS, parseExposureMode, identityFromFlags, identityFromPrincipal } from './identity.ts';
