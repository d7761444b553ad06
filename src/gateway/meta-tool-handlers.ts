/**
 * @module gateway/meta-tool-handlers
 * The meta-tools' work: `search_tools` (seed 004 §4: search, bind, redundant-search note §8,
 * marketplace suggestions §10, opens the selection event whose outcome the session reports),
 * `list_capabilities` and `load_capability` (seed 002). Each binds what it found into the
 * session's tool context and readmits tools the guard had suspended (§7.5).
 */
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { jsonSafetyCheck } from '../core/validation.ts';
import type { GatewayBackend, GatewayTool } from './backend.ts';
import { offeredTo, type CallerCapabilities } from './client-requirements.ts';
import { notifyToolsChanged, sessionTokens } from './listed-tools.ts';
import { showAppToolMeta } from './mcp-apps.ts';
import { CALL_TOOL, LOAD_CAPABILITY, SEARCH_TOOLS } from './meta-tools.ts';
import { toolNaming } from './native-names.ts';
import { flushOutcome, type GatewayCore, type SendNotification, type SessionState } from './session-state.ts';

// NUL bytes (which the database cannot store) and absurd nesting are InvalidParams at the
// boundary (issue #18, finding 7).
const searchArgumentsSchema = z.object({ query: z.string().trim().min(1).max(1000), limit: z.number().int().min(1).optional() }).superRefine(jsonSafetyCheck());
const loadCapabilityArgumentsSchema = z.object({ name: z.string().min(1).max(1000) }).superRefine(jsonSafetyCheck());

type MarketplaceSuggestions = Awaited<ReturnType<GatewayBackend['suggestMarketplace']>>;

/**
 * The name the session calls a tool by (issue #12): its native name when the workspace shows
 * native names and the name is unambiguous, else `plugin__tool`, exactly as `tools/list` shows it.
 */
async function shownToolNames(core: GatewayCore, state: SessionState): Promise<(qualifiedName: string) => string> {
  if (!state.nativeNames) return (name) => name;
  const naming = await toolNaming(core, state);
  return (name) => naming.shown.get(name) ?? name;
}

/** `search_tools`: finds, binds and describes tools for a query (only tools the caller declared the capabilities for, issue #24). */
export async function searchTools(core: GatewayCore, state: SessionState, rawArguments: unknown, send: SendNotification, caller: CallerCapabilities): Promise<CallToolResult> {
  const { backend, logger, settings } = core;
  const parsed = searchArgumentsSchema.safeParse(rawArguments ?? {});
  if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${SEARCH_TOOLS}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  const { query } = parsed.data;
  const limit = Math.min(parsed.data.limit ?? settings.defaultLimit, settings.maxLimit);
  flushOutcome(core, state);
  const boundBefore = new Set(state.context.list().map((tool) => tool.qualifiedName));
  // Always-include tools are already in context: ask for enough to still fill `limit` (§4.4).
  const offered = offeredTo(caller);
  const found = await backend.searchTools(state.backendSession, query, { limit: limit + state.context.alwaysCount, offered });
  const tools = found.tools
    .filter((tool) => tool.visibility !== 'silent' && !state.context.isAlwaysIncluded(tool.qualifiedName) && offered(tool))
    .slice(0, limit);
  for (const warning of found.warnings) logger.debug({ sessionId: state.id, warning }, 'search degraded');

  // §7.5: a search clears the eviction list and re-discovery resets the loop counters.
  const readmitted = [...state.suspended];
  state.suspended.clear();
  for (const name of [...readmitted, ...tools.map((tool) => tool.qualifiedName)]) state.guard.reset(name);

  const verdict = state.history.record(query, tools.map((tool) => tool.qualifiedName));
  // Issue #24: the still surface binds nothing, so the tool list (and the prompt cache) stays.
  const still = state.mode === 'still';
  const bind = still ? { added: [], refreshed: [], evicted: [] } : state.context.bind(tools);
  if (found.eventId) state.openEvent = { eventId: found.eventId, openedAt: core.now(), calls: [] };
  const marketplace = tools.length < settings.marketplaceThreshold ? await suggestMarketplace(core, state, query) : [];
  const shown = await shownToolNames(core, state);

  const describe = (tool: GatewayTool, full: boolean) => ({
    name: shown(tool.qualifiedName),
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description,
    ...(full ? { inputSchema: tool.inputSchema } : {}),
    // Issue #24: on the still surface the result is the model's only copy of the definition.
    ...(full && still && tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(full && still && tool.annotations ? { annotations: tool.annotations } : {}),
    // MCP Apps: the view a found tool names, at the session's ui:// address (the host renders it).
    ...(full && still && tool._meta ? { _meta: showAppToolMeta(tool.pluginName, tool._meta) } : {}),
    tokens: tool.tokens,
    plugin: tool.pluginName,
  });
  const payload: Record<string, unknown> = { query };
  if (verdict.redundant && still) {
    // §8 on the still surface: nothing was bound, so every definition is returned again.
    payload.note =
      `These results overlap ${Math.round(verdict.overlap * 100)}% with your search "${verdict.previousQuery}" ${verdict.secondsAgo} s ago. ` +
      'Run one of them with call_tool; if you need something different, search with a more specific query.';
    payload.tools = tools.map((tool) => describe(tool, true));
  } else if (verdict.redundant) {
    // §8: still bound and returned, but schemas the model already has are not repeated.
    const fresh = tools.filter((tool) => !boundBefore.has(tool.qualifiedName));
    payload.note =
      `These results overlap ${Math.round(verdict.overlap * 100)}% with your search "${verdict.previousQuery}" ${verdict.secondsAgo} s ago: ` +
      'the tools listed under alreadyAvailable are already in your tool list, call them directly. ' +
      'If you need something different, search with a more specific query.';
    payload.alreadyAvailable = tools.filter((tool) => boundBefore.has(tool.qualifiedName)).map((tool) => describe(tool, false));
    payload.tools = fresh.map((tool) => describe(tool, true));
  } else {
    payload.tools = tools.map((tool) => describe(tool, true));
  }
  if (tools.length === 0) payload.note = `No installed tool matches "${query}".${marketplace.length > 0 ? ' Installable plugins that may help are listed under marketplace; ask the user whether to install one.' : ' Try different words.'}`;
  if (marketplace.length > 0) payload.marketplace = marketplace;
  if (bind.evicted.length > 0) payload.evicted = bind.evicted.map(shown);
  if (still) payload.next = `Run a tool with ${CALL_TOOL} {"name": "<name>", "arguments": {...}}.`;
  else payload.session = { boundTools: state.boundTools().length, toolTokens: sessionTokens(state), capacity: settings.capacity };
  if (!still && (bind.added.length > 0 || bind.evicted.length > 0 || readmitted.length > 0)) await notifyToolsChanged(core, send, state);
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
}

/** Marketplace suggestions for a search that found too little; a failure means none (seed 004 §10). */
async function suggestMarketplace(core: GatewayCore, state: SessionState, query: string): Promise<MarketplaceSuggestions> {
  try {
    return await core.backend.suggestMarketplace(state.backendSession, query, core.settings.marketplaceLimit);
  } catch (error) {
    core.logger.warn({ err: error, sessionId: state.id }, 'marketplace suggestions failed');
    return [];
  }
}

/** `list_capabilities`: the session's non-silent plugins with when to use them. */
export async function listCapabilities(core: GatewayCore, state: SessionState, caller: CallerCapabilities): Promise<CallToolResult> {
  const capabilities = (await core.backend.listCapabilities(state.backendSession, { offered: offeredTo(caller) })).filter((capability) => capability.visibility !== 'silent');
  const plugins = capabilities.map((capability) => ({
    name: capability.name,
    title: capability.title,
    summary: capability.summary,
    whenToUse: capability.whenToUse,
    ...(capability.whenNotToUse?.length ? { whenNotToUse: capability.whenNotToUse } : {}),
    tags: capability.tags,
    ...(capability.category ? { category: capability.category } : {}),
    toolCount: capability.toolCount,
    loaded: capability.visibility === 'always',
    // Seed 002: experimental plugins carry a warning footnote.
    ...(capability.stability === 'experimental' ? { note: 'Experimental: results may be unreliable.' } : {}),
  }));
  const payload = { capabilities: plugins };
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
}

/** `load_capability`: binds one plugin's non-silent tools into the session. */
export async function loadCapability(core: GatewayCore, state: SessionState, rawArguments: unknown, send: SendNotification, caller: CallerCapabilities): Promise<CallToolResult> {
  const parsed = loadCapabilityArgumentsSchema.safeParse(rawArguments ?? {});
  if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${LOAD_CAPABILITY}: name is required`);
  const tools = await core.backend.capabilityTools(state.backendSession, parsed.data.name);
  if (!tools) throw new McpError(ErrorCode.InvalidParams, `Unknown capability: ${parsed.data.name}. Call list_capabilities for the names.`);
  const visible = tools.filter((tool) => tool.visibility !== 'silent' && offeredTo(caller)(tool));
  const readmitted = visible.filter((tool) => state.suspended.delete(tool.qualifiedName));
  for (const tool of visible) state.guard.reset(tool.qualifiedName);
  const bind = state.context.bind(visible);
  const shown = await shownToolNames(core, state);
  const payload = {
    loaded: parsed.data.name,
    tools: visible.map((tool) => ({ name: shown(tool.qualifiedName), description: tool.description, tokens: tool.tokens })),
    ...(bind.evicted.length > 0 ? { evicted: bind.evicted.map(shown) } : {}),
    session: { boundTools: state.boundTools().length, toolTokens: sessionTokens(state), capacity: core.settings.capacity },
  };
  if (bind.added.length > 0 || bind.evicted.length > 0 || readmitted.length > 0) await notifyToolsChanged(core, send, state);
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
}
