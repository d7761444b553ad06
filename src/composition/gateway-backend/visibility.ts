/**
 * @module composition/gateway-backend/visibility
 * What a gateway session may see: the selection engine's `visibleTools` for the session's
 * context (policy, enablement, organisation; fail closed), without silent tools
 * (middleware-only) and, for an expert session, only its allow-list. Also the one
 * `GatewayTool` view of a candidate, built once per candidate object.
 *
 * Every plugin call asks what the session may see (issue #28, the stdio call path): the
 * filtered list, the tool by name and its plugin's tools are indexed once per list the engine
 * returns (keyed by that array, so the engine's own invalidation drops the index with it) and
 * per expert allow-list, instead of a filter and a scan of every tool on each call. The
 * decision itself is still the engine's, asked on every call.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { notFound } from '../../core/errors.ts';
import type { BackendSession, GatewayTool } from '../../gateway/backend.ts';
import { toolDefinitionTokens } from '../../gateway/meta-tools.ts';
import type { SelectionEngine } from '../../selection/index.ts';
import { mcpDefinition } from '../../selection/token-counts.ts';
import type { SelectionCandidate } from '../../store/repositories/candidates.ts';

/** What a session sees, indexed (shared between calls: read only). */
export interface VisibleIndex {
  /** The visible, non-silent tools (expert allow-list applied). */
  readonly tools: readonly SelectionCandidate[];
  /** The same tools by qualified name. */
  readonly byName: ReadonlyMap<string, SelectionCandidate>;
  /** Plugins with at least one visible tool, with those tools, by plugin name. */
  readonly byPlugin: ReadonlyMap<string, readonly SelectionCandidate[]>;
  /** The tools by id (each the one its qualified name resolves to). */
  readonly byId: ReadonlyMap<string, SelectionCandidate>;
  /**
   * Ids of the engine's candidates this index leaves out (silent tier, expert allow-list, a
   * second tool under a taken name): a search must not offer them.
   */
  readonly hiddenIds: ReadonlySet<string>;
  /** The tools that need client capabilities (issue #24): few, checked per caller. */
  readonly needingCapabilities: readonly SelectionCandidate[];
  /** A plugin's own tool names (a result may name them); computed once per plugin. */
  ownToolNames(pluginName: string): readonly string[];
}

/** The session's visible tools and plugins. */
export interface SessionVisibility {
  /** What the session sees now, indexed (asks the selection engine every time). */
  index(session: BackendSession): Promise<VisibleIndex>;
  /** The session's visible, non-silent tools (expert allow-list applied). */
  visible(session: BackendSession): Promise<readonly SelectionCandidate[]>;
  /** Plugins the session can see (at least one visible tool), with those tools, by name. */
  visiblePlugins(session: BackendSession): Promise<ReadonlyMap<string, readonly SelectionCandidate[]>>;
  /** Throws `not_found` unless the session can see the plugin. */
  requireVisiblePlugin(session: BackendSession, pluginName: string): Promise<void>;
  /** The gateway's view of a candidate (with a search score when given). */
  toGatewayTool(candidate: SelectionCandidate, score?: number): GatewayTool;
}

/** The selection context of a session (only the fields it has). */
export function contextOf(session: BackendSession) {
  return {
    workspace: session.workspace,
    ...(session.project ? { project: session.project } : {}),
    ...(session.orgId ? { orgId: session.orgId } : {}),
    ...(session.userId ? { userId: session.userId } : {}),
    ...(session.roles.length > 0 ? { roles: [...session.roles] } : {}),
    ...(session.tier ? { tier: session.tier } : {}),
    sessionId: session.sessionId,
  };
}

/** Creates the session visibility over the selection engine. */
export function createSessionVisibility(selection: Pick<SelectionEngine, 'visibleTools' | 'definitionTokens'>): SessionVisibility {
  // The engine's stored counts (the sync counts each tool's MCP definition), so a session's
  // token figures load no tokenizer for synced tools (issue #28).
  const definitionTokens = selection.definitionTokens === undefined
    ? (candidate: SelectionCandidate) => toolDefinitionTokens(mcpDefinition(candidate) satisfies Tool)
    : selection.definitionTokens;
  const gatewayTools = new WeakMap<SelectionCandidate, GatewayTool>();
  // The engine's list → (expert allow-list, or NO_LIST) → its index. Both keys are the arrays
  // themselves: a new list from the engine (a catalog or policy change) is a new key.
  const indexes = new WeakMap<readonly SelectionCandidate[], WeakMap<object, VisibleIndex>>();
  const NO_LIST = {};

  function allowedByExpertList(session: BackendSession, qualifiedName: string): boolean {
    return session.expertAllowList === undefined || session.expertAllowList.includes(qualifiedName);
  }

  // A frozen session's context, built and frozen once: the engine keeps the parse of a frozen
  // context, so a plugin call no longer runs the context schema (issue #28).
  const contexts = new WeakMap<BackendSession, ReturnType<typeof contextOf>>();
  function sessionContext(session: BackendSession): ReturnType<typeof contextOf> {
    if (!Object.isFrozen(session) || !Object.isFrozen(session.roles)) return contextOf(session);
    let context = contexts.get(session);
    if (context === undefined) {
      const built = contextOf(session);
      if (built.roles) Object.freeze(built.roles);
      contexts.set(session, (context = Object.freeze(built)));
    }
    return context;
  }

  async function index(session: BackendSession): Promise<VisibleIndex> {
    const { tools } = await selection.visibleTools(sessionContext(session));
    const listKey: object = session.expertAllowList ?? NO_LIST;
    let byList = indexes.get(tools);
    if (byList === undefined) indexes.set(tools, (byList = new WeakMap()));
    let built = byList.get(listKey);
    if (built === undefined) byList.set(listKey, (built = buildIndex(tools, tools.filter((tool) => tool.visibility !== 'silent' && allowedByExpertList(session, tool.qualifiedName)))));
    return built;
  }

  const visible = async (session: BackendSession) => (await index(session)).tools;
  const visiblePlugins = async (session: BackendSession) => (await index(session)).byPlugin;

  function toGatewayTool(candidate: SelectionCandidate, score?: number): GatewayTool {
    let tool = gatewayTools.get(candidate);
    if (!tool) {
      tool = gatewayToolOf(candidate, definitionTokens);
      gatewayTools.set(candidate, tool);
    }
    return score === undefined ? tool : { ...tool, score };
  }

  return {
    index,
    visible,
    visiblePlugins,
    async requireVisiblePlugin(session, pluginName) {
      if (!(await visiblePlugins(session)).has(pluginName)) throw notFound('plugin', pluginName);
    },
    toGatewayTool,
  };
}

/** Indexes `tools`, the visible part of the engine's candidate list `all`. */
function buildIndex(all: readonly SelectionCandidate[], tools: SelectionCandidate[]): VisibleIndex {
  const byName = new Map<string, SelectionCandidate>();
  const byPlugin = new Map<string, SelectionCandidate[]>();
  for (const tool of tools) {
    if (!byName.has(tool.qualifiedName)) byName.set(tool.qualifiedName, tool);
    if (!tool.pluginName) continue;
    const list = byPlugin.get(tool.pluginName);
    if (list) list.push(tool);
    else byPlugin.set(tool.pluginName, [tool]);
  }
  const byId = new Map([...byName.values()].map((tool) => [tool.id, tool]));
  const hiddenIds = new Set(all.filter((candidate) => byId.get(candidate.id) !== candidate).map((candidate) => candidate.id));
  const needingCapabilities = tools.filter((tool) => (tool.clientRequirements?.length ?? 0) > 0);
  const ownNames = new Map<string, readonly string[]>();
  function ownToolNames(pluginName: string): readonly string[] {
    let names = ownNames.get(pluginName);
    if (names === undefined) ownNames.set(pluginName, (names = (byPlugin.get(pluginName) ?? []).map((tool) => tool.name)));
    return names;
  }
  return { tools, byName, byPlugin, byId, hiddenIds, needingCapabilities, ownToolNames };
}

/** The MCP fields a plugin declared that the catalog keeps in `metadata.mcpFields` (issue #12). */
function mcpFieldsOf(candidate: SelectionCandidate): Pick<GatewayTool, 'icons' | 'execution' | '_meta'> {
  const fields = candidate.mcpFields ?? {};
  return {
    ...(Array.isArray(fields['icons']) ? { icons: fields['icons'] as GatewayTool['icons'] } : {}),
    ...(isObject(fields['execution']) ? { execution: fields['execution'] as GatewayTool['execution'] } : {}),
    ...(isObject(fields['_meta']) ? { _meta: fields['_meta'] as GatewayTool['_meta'] } : {}),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Builds the gateway's view of a candidate, with the tokens its definition costs. The count is
 * taken on the first read of `tokens` (a search result, `list_capabilities`, a session's token
 * sum), not here: `tools/call` builds this view too, and counting there loaded the o200k
 * tokenizer (~0.3 s) on a session's first plugin call, and a BPE pass over every schema it calls
 * (issue #28).
 */
function gatewayToolOf(candidate: SelectionCandidate, definitionTokens: (candidate: SelectionCandidate) => number): GatewayTool {
  const inputSchema = { type: 'object' as const, ...candidate.parameters };
  const tool: Omit<GatewayTool, 'tokens'> = {
    qualifiedName: candidate.qualifiedName,
    pluginName: candidate.pluginName ?? '',
    ...(candidate.displayName ? { title: candidate.displayName } : {}),
    description: candidate.description,
    inputSchema,
    ...(candidate.returnSchema ? { outputSchema: candidate.returnSchema as NonNullable<GatewayTool['outputSchema']> } : {}),
    ...(Object.keys(candidate.annotations).length > 0 ? { annotations: candidate.annotations as GatewayTool['annotations'] } : {}),
    ...mcpFieldsOf(candidate),
    ...(candidate.clientRequirements !== undefined && candidate.clientRequirements.length > 0 ? { requiresClientCapabilities: candidate.clientRequirements } : {}),
    visibility: candidate.visibility,
    pinned: candidate.isAlwaysPinned,
  };
  let tokens: number | undefined;
  // Enumerable, so a spread (`{ ...tool, score }`) or JSON carries the count like a plain field.
  Object.defineProperty(tool, 'tokens', {
    enumerable: true,
    // The text the sync stored a count of (`mcpDefinition`), so no tokenizer is needed.
    get: () => (tokens ??= definitionTokens(candidate)),
  });
  return tool as GatewayTool;
}
