/**
 * @module gateway/client-requirements
 * Tools offered by what the caller declared (issue #24). A 2026-07-28 plugin may list a tool
 * only to clients that declare the capability it uses (discovery records which, per tool:
 * `GatewayTool.requiresClientCapabilities`); the gateway does the same for its own callers: a
 * tool is in `tools/list` (every exposure), in `search_tools` results and callable through
 * `tools/call` / `call_tool` only when the caller declared every capability it needs. The
 * caller's capabilities are a 2025 session's (`initialize`, `server.getClientCapabilities()`)
 * or a 2026-07-28 request's own (`_meta`); the latter may differ per request, which the
 * revision allows (a list varies by the request's declared capabilities, never as a side
 * effect of other requests). A refused call reads like an unknown tool, plus what is missing.
 */
import type { CLIENT_CAPABILITIES_META_KEY as SDK_CLIENT_CAPABILITIES_META_KEY, ServerContext } from '@modelcontextprotocol/server';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ClientLinkCapabilities, GatewayTool } from './backend.ts';
import { unknownToolError } from './errors.ts';
import type { SessionState } from './session-state.ts';

/**
 * The `_meta` key of a 2026-07-28 request's declared capabilities: the SDK v2's constant, spelled
 * here (its type is the literal, so a change in the SDK fails the typecheck) because this module
 * serves 2025 sessions too and must not load the v2 server package (issue #28: idle memory).
 */
const CLIENT_CAPABILITIES_META_KEY: typeof SDK_CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** The capabilities a caller declared (the ones a tool can need). */
export type CallerCapabilities = ClientLinkCapabilities;

/** Only the capabilities a tool can need, from a declaration (either era's shape). */
function pick(declared: Record<string, unknown> | undefined): CallerCapabilities {
  const from = (declared ?? {}) as CallerCapabilities;
  return {
    ...(from.sampling ? { sampling: from.sampling } : {}),
    ...(from.elicitation ? { elicitation: from.elicitation } : {}),
    ...(from.roots ? { roots: from.roots } : {}),
  };
}

/** What a 2025 session's client declared in `initialize` (none for a 2026 principal's state, which never initializes). */
export function sessionCapabilities(state: SessionState): CallerCapabilities {
  return pick(state.server.getClientCapabilities() as Record<string, unknown> | undefined);
}

/** What a 2026-07-28 request declared in its `_meta`. */
export function requestCapabilities(ctx: ServerContext): CallerCapabilities {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  return pick(envelope[CLIENT_CAPABILITIES_META_KEY] as Record<string, unknown> | undefined);
}

/** The capabilities `tool` needs that `caller` did not declare (empty: it may use it). */
export function missingCapabilities(tool: Pick<GatewayTool, 'requiresClientCapabilities'>, caller: CallerCapabilities): string[] {
  return (tool.requiresClientCapabilities ?? []).filter((capability) => (caller as Record<string, unknown>)[capability] === undefined);
}

/** True when `caller` declared everything `tool` needs. */
export function offeredTo(caller: CallerCapabilities): (tool: Pick<GatewayTool, 'requiresClientCapabilities'>) => boolean {
  return (tool) => missingCapabilities(tool, caller).length === 0;
}

/** The refusal of a call of a tool the caller cannot use: an unknown tool, saying what it needs. */
export function lacksCapabilitiesError(name: string, missing: readonly string[]): McpError {
  const what = missing.length === 1 ? `the client capability '${missing[0]}'` : `the client capabilities ${missing.map((capability) => `'${capability}'`).join(' and ')}`;
  return unknownToolError(name, `It is offered only to clients that declare ${what}, which this client did not declare`);
}
