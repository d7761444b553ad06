/**
 * @module gateway/listed-tools
 * What a session's tool list shows, by exposure mode: in `all` every visible non-silent
 * tool; in `search` and `capabilities` the mode's meta-tools plus the bound tools the guard
 * has not suspended. Also the session's instructions, its bound-tool token count and the
 * `tools/list_changed` notification that tells the client to list again.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { CatalogOverview, ExposureMode } from './backend.ts';
import { offeredTo, type CallerCapabilities } from './client-requirements.ts';
import {
  CALL_TOOL,
  LIST_CAPABILITIES,
  LOAD_CAPABILITY,
  SEARCH_TOOLS,
  callToolDefinition,
  listCapabilitiesDefinition,
  loadCapabilityDefinition,
  searchToolsDefinition,
  searchToolsDescription,
  toMcpTool,
} from './meta-tools.ts';
import { showTools } from './native-names.ts';
import type { GatewayCore, SendNotification, SessionState } from './session-state.ts';

/** The server instructions a session opens with. */
export function instructionsFor(mode: ExposureMode, overview: CatalogOverview): string {
  const plugins = overview.plugins.length;
  const what = `Quiver is an MCP gateway in front of ${overview.toolCount} tool${overview.toolCount === 1 ? '' : 's'} from ${plugins} plugin${plugins === 1 ? '' : 's'}.`;
  if (mode === 'search') return `${what} Call search_tools to find and enable the tools a task needs; call_tool runs a found tool if your client does not refresh its tool list.`;
  if (mode === 'still') return `${what} Call search_tools to find the tools a task needs (it returns their definitions), then run one with call_tool. Your tool list stays the same.`;
  if (mode === 'capabilities') return `${what} Call list_capabilities to see the plugins, then load_capability to enable one.`;
  return `${what} Every tool you may use is listed.`;
}

/** True when `name` is a meta-tool the mode exposes (others fall through as unknown tools). */
export function isMetaToolOf(mode: ExposureMode, name: string): boolean {
  if (mode === 'search' || mode === 'still') return name === SEARCH_TOOLS || name === CALL_TOOL;
  if (mode === 'capabilities') return name === LIST_CAPABILITIES || name === LOAD_CAPABILITY || name === CALL_TOOL;
  return false;
}

/**
 * The session's `tools/list` answer, under native names where the workspace asks for them;
 * only tools the caller declared the client capabilities for (issue #24, `client-requirements.ts`).
 */
export async function listTools(core: GatewayCore, state: SessionState, caller: CallerCapabilities): Promise<Tool[]> {
  return showTools(core, state, await listedTools(core, state, caller));
}

async function listedTools(core: GatewayCore, state: SessionState, caller: CallerCapabilities): Promise<Tool[]> {
  const offered = offeredTo(caller);
  if (state.mode === 'all') {
    const tools = await core.backend.listVisibleTools(state.backendSession);
    return tools.filter((tool) => tool.visibility !== 'silent' && offered(tool)).map(toMcpTool);
  }
  const { defaultLimit, maxLimit } = core.settings;
  if (state.mode === 'still') return stillTools(core, state, caller);
  const bound = state.context
    .list()
    .filter((tool) => !state.suspended.has(tool.qualifiedName) && offered(tool))
    .map(toMcpTool);
  const meta =
    state.mode === 'search'
      ? [searchToolsDefinition(searchToolsDescription(state.overview, maxLimit), defaultLimit, maxLimit), callToolDefinition('search')]
      : [listCapabilitiesDefinition(state.overview), loadCapabilityDefinition(), callToolDefinition('capabilities')];
  return [...meta, ...bound];
}

/**
 * The `still` list (issue #24; MCP 2026-07-28 forbids a `tools/list` that varies as a side effect
 * of other requests): the meta-tools, then the always-visible and pinned tools sorted by name.
 * It depends on the principal, the catalog and the request's declared capabilities only: a
 * search, a call or the loop guard never change it (a suspended tool is refused at call time
 * instead of leaving the list).
 */
function stillTools(core: GatewayCore, state: SessionState, caller: CallerCapabilities): Tool[] {
  const { defaultLimit, maxLimit } = core.settings;
  const always = state.context
    .alwaysIncluded()
    .filter(offeredTo(caller))
    .map(toMcpTool)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return [searchToolsDefinition(searchToolsDescription(state.overview, maxLimit, true), defaultLimit, maxLimit), callToolDefinition('still'), ...always];
}

/** Tokens of the bound, unsuspended tool definitions. */
export function sessionTokens(state: SessionState): number {
  return state.context
    .list()
    .filter((tool) => !state.suspended.has(tool.qualifiedName))
    .reduce((sum, tool) => sum + tool.tokens, 0);
}

/** Tells the client its tool list changed (on the current request when there is one); never throws. */
export async function notifyToolsChanged(core: GatewayCore, send: SendNotification | undefined, state: SessionState): Promise<void> {
  try {
    if (send) await send({ method: 'notifications/tools/list_changed' });
    else await state.server.sendToolListChanged();
  } catch (error) {
    core.logger.debug({ err: error, sessionId: state.id }, 'tools/list_changed could not be sent');
  }
}
