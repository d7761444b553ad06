/**
 * @module gateway/mcp-headers
 * What a 2026-07-28 request's headers say, used before its body is read (issue #24). The
 * revision's HTTP transport names the method in `Mcp-Method` and its target in `Mcp-Name`; a
 * tool's header parameters travel as `Mcp-Param-<Name>` (SEP-2243), and Quiver declares
 * `call_tool`'s `name` as `Tool-Name` (`modern-server.ts`), so the real target of a
 * `call_tool` is in `Mcp-Param-Tool-Name`. The SDK entry (and `http.ts` for `Tool-Name`) refuses
 * a body that disagrees with these headers (`-32020`), which is what makes deciding on the
 * headers sound:
 *
 * - **authorization**: a `tools/call` whose header target the principal may not call (unknown,
 *   another organisation's, silent), and a `prompts/get` / `resources/read` whose `Mcp-Name`
 *   names no plugin the principal sees, is refused with 403 before the body is parsed;
 * - **metrics**: the request is counted under the header's method (`McpRequestObserver`);
 * - **forwarding**: `Mcp-Param-*` headers other than Quiver's own are passed to the plugin over
 *   HTTP transports (`core/forwarded-headers.ts`).
 */
import { JSON_RPC_HTTP_ERROR } from '../core/bearer-challenge.ts';
import type { SessionIdentity } from './backend.ts';
import type { Gateway } from './gateway.ts';
import { CALL_TOOL, META_TOOL_NAMES, parsePromptName } from './meta-tools.ts';
import { prefixedPromptName, prefixedToolName } from './native-names.ts';
import { sessionResourceAddressing } from './resource-addressing.ts';
import { SessionState } from './session-state.ts';

/** Quiver's own header parameter (call_tool's target). */
export const TOOL_NAME_HEADER = 'mcp-param-tool-name';

/** Most `Mcp-Param-*` headers forwarded, and the longest value (a header is not a payload). */
const MAX_FORWARDED = 32;
const MAX_VALUE_LENGTH = 8_192;

/** A request's method and target as its headers name them. */
export interface HeaderTarget {
  method: string;
  /** `Mcp-Name`. */
  name: string | undefined;
  /** The plugin tool a `tools/call` runs: `Mcp-Name`, or for `call_tool` its `Tool-Name` parameter. */
  toolName: string | undefined;
  /** `Mcp-Param-*` headers for the plugin (lower-case names). */
  forwarded: Record<string, string>;
}

/** The target a 2026-07-28 request's headers name; undefined without `Mcp-Method`. */
export function headerTarget(request: Request): HeaderTarget | undefined {
  const method = request.headers.get('mcp-method');
  if (method === null || method === '') return undefined;
  const name = request.headers.get('mcp-name') ?? undefined;
  let toolName: string | undefined;
  if (method === 'tools/call' && name !== undefined) toolName = name === CALL_TOOL ? (request.headers.get(TOOL_NAME_HEADER) ?? undefined) : META_TOOL_NAMES.has(name) ? undefined : name;
  const forwarded: Record<string, string> = {};
  let count = 0;
  request.headers.forEach((value, header) => {
    if (!header.startsWith('mcp-param-') || count >= MAX_FORWARDED || value.length > MAX_VALUE_LENGTH) return;
    // Tool-Name of a call_tool is Quiver's own parameter, not the plugin's.
    if (header === TOOL_NAME_HEADER && name === CALL_TOOL) return;
    forwarded[header] = value;
    count += 1;
  });
  return { method, name, toolName, forwarded };
}

/**
 * The 403 for a request whose header target the identity may not reach; undefined when it may
 * (or the headers name nothing Quiver checks: the body decides as usual). An unknown target and
 * a hidden one get the same answer.
 *
 * - `tools/call`: the tool (directly or `call_tool`'s `Tool-Name`) must be one the principal may call;
 * - `prompts/get` / `resources/read`: `Mcp-Name` (the prompt's name, the resource's URI), when it
 *   is a plugin's address, must name a plugin the principal sees, the same plugin check the body's request makes
 *   (`GatewayBackend.readResource` / `getPrompt` refuse a plugin the session cannot see). A
 *   prompt or resource that a visible plugin does not have still goes to the plugin, which
 *   answers for it.
 */
export async function headerRefusal(gateway: Gateway, identity: SessionIdentity, target: HeaderTarget): Promise<Response | undefined> {
  const checked = target.method === 'tools/call' ? target.toolName : target.method === 'prompts/get' || target.method === 'resources/read' ? target.name : undefined;
  if (checked === undefined) return undefined;
  const state = await gateway.principalSession(identity);
  if (!(state instanceof SessionState)) return undefined;
  if (await reachable(state, target.method, checked)) return undefined;
  const what = target.method === 'tools/call' ? 'tool' : target.method === 'prompts/get' ? 'prompt' : 'resource';
  const message = `Forbidden: ${what} '${checked}' is unknown or not available to this credential`;
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: JSON_RPC_HTTP_ERROR, message }, id: null }), { status: 403, headers: { 'content-type': 'application/json' } });
}

/** Whether the session may reach what the header names (see `headerRefusal`). */
async function reachable(state: SessionState, method: string, name: string): Promise<boolean> {
  const { core } = state;
  if (method === 'tools/call') {
    const tool = await core.backend.getTool(state.backendSession, await prefixedToolName(core, state, name));
    return tool !== undefined && tool.visibility !== 'silent';
  }
  const pluginName = method === 'prompts/get' ? parsePromptName(await prefixedPromptName(core, state, name))?.pluginName : (await sessionResourceAddressing(core, state)).resolve(name)?.pluginName;
  // A name that is no plugin's address at all is left to the body's request: it answers "not
  // found" with the request's id, as the 2026-07-28 schema and conformance (sep-2164) require of
  // an unknown resource. Nothing about another organisation is told by that: a hidden plugin's
  // address and an unknown plugin's address both get the 403 below.
  if (pluginName === undefined) return true;
  // A plugin the session sees is one with a visible tool (the backend's capabilityTools answers exactly that).
  return (await core.backend.capabilityTools(state.backendSession, pluginName)) !== undefined;
}
