/**
 * @module composition/gateway-backend/tools
 * The backend's tool methods: search (ranked by the selection engine, then held to what the
 * session may see), the visible tool list, one tool, and a call run by the supervisor with
 * the tool's read-only and idempotent hints (they decide its retries), its result screened for
 * poisoning before it goes back (result-screen.ts).
 */
import { QuiverError, ErrorCodes, notFound } from '../../core/errors.ts';
import type { GatewayBackend, GatewayTool, ToolSearchOptions } from '../../gateway/backend.ts';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ungrantedPathHint } from '../../runtime/host-mounts.ts';
import type { Supervisor, UpstreamSpec } from '../../runtime/index.ts';
import type { SelectionEngine } from '../../selection/index.ts';
import type { BackendCaches } from './caches.ts';
import { contextOf, type SessionVisibility, type VisibleIndex } from './visibility.ts';
import { parseQualifiedName } from '../../core/names.ts';
import { quarantinedError, type PinningService } from '../../trust/pinning/index.ts';
import type { PinGuard } from './pin-guard.ts';
import { screenToolResult } from './result-screen.ts';
import type { RolloutService } from '../../rollouts/index.ts';
import type { OwnedSpec } from './remote-owner.ts';

/** What the tool methods are built from. */
export interface ToolMethodsDeps {
  selection: Pick<SelectionEngine, 'selectTools'>;
  supervisor: Pick<Supervisor, 'callTool' | 'hiddenPaths'>;
  visibility: SessionVisibility;
  caches: Pick<BackendCaches, 'specFor'>;
  /** Blue-green slots (issue #11): the spec of the slot serving this session during a rollout. */
  slots?: Pick<RolloutService, 'route'> | undefined;
  /** Tool pinning (issue #10): the quarantine of a plugin tool, if any. */
  pinning?: Pick<PinningService, 'quarantineOf'> | undefined;
  /** Tool pinning at run time: screens a restarted plugin's tools before a call reaches it. */
  pinGuard?: PinGuard | undefined;
  /** Issue #27: a remote plugin authorized per user or organisation is called with the session's owner's authorization. */
  owned?: OwnedSpec | undefined;
}

/**
 * A tool error about a host path the plugin was not granted gets a hint naming the command that
 * grants it (issue #26): the plugin only sees "ENOENT", the user needs to know the sandbox hid it.
 */
function withPathHint(result: CallToolResult, spec: UpstreamSpec, hiddenPaths: readonly string[]): CallToolResult {
  if (result.isError !== true || spec.transport !== 'stdio') return result;
  const text = (result.content ?? []).flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n').slice(0, 16_384);
  const hint = ungrantedPathHint(text, spec, { hiddenPaths });
  return hint === undefined ? result : { ...result, content: [...(result.content ?? []), { type: 'text', text: hint }] };
}

/** The ids a search for this caller leaves out before ranking; undefined when none. */
function excludedIds(visible: VisibleIndex, visibility: SessionVisibility, offered: ToolSearchOptions['offered']): ReadonlySet<string> | undefined {
  const refused = offered === undefined ? [] : visible.needingCapabilities.filter((candidate) => !offered(visibility.toGatewayTool(candidate)));
  if (refused.length === 0) return visible.hiddenIds.size === 0 ? undefined : visible.hiddenIds;
  const ids = new Set(visible.hiddenIds);
  for (const candidate of refused) ids.add(candidate.id);
  return ids;
}

/** Creates `searchTools`, `listVisibleTools`, `getTool` and `callTool`. */
export function createToolMethods(deps: ToolMethodsDeps): Pick<GatewayBackend, 'searchTools' | 'listVisibleTools' | 'getTool' | 'callTool'> {
  const { selection, visibility } = deps;

  /**
   * The `quarantined` refusal of a tool the session cannot see because it is quarantined. Only
   * for a plugin the session sees other tools of: a quarantine never reveals another tenant's plugin.
   */
  async function quarantineRefusal(qualifiedName: string, visible: VisibleIndex): Promise<QuiverError | undefined> {
    const parsed = parseQualifiedName(qualifiedName);
    if (deps.pinning === undefined || parsed === undefined || !visible.byPlugin.has(parsed.plugin)) return undefined;
    const record = await deps.pinning.quarantineOf(parsed.plugin, parsed.tool);
    return record === undefined ? undefined : quarantinedError(qualifiedName, record);
  }

  return {
    async searchTools(session, query, options) {
      const limit = Math.max(1, Math.min(50, options.limit));
      const visible = await visibility.index(session);
      const exclude = excludedIds(visible, visibility, options.offered);
      const result = await selection.selectTools({ query, context: contextOf(session), k: limit, provider: 'mcp' }, exclude ? { exclude } : {});
      const tools: GatewayTool[] = [];
      for (const selected of result.tools) {
        // The engine was told what to leave out; checked again here, as visibility is everywhere.
        const candidate = visible.byId.get(selected.id);
        if (!candidate || exclude?.has(candidate.id) === true) continue;
        tools.push(visibility.toGatewayTool(candidate, selected.score));
      }
      return { tools, ...(result.metadata.eventId ? { eventId: result.metadata.eventId } : {}), warnings: result.metadata.warnings };
    },

    async listVisibleTools(session, options = {}) {
      const tools = await visibility.visible(session);
      const tiers = options.visibility;
      return tools
        .filter((tool) => !tiers || tiers.includes(tool.visibility) || (options.includePinned === true && tool.isAlwaysPinned))
        .map((tool) => visibility.toGatewayTool(tool));
    },

    async getTool(session, qualifiedName) {
      const visible = await visibility.index(session);
      const tool = visible.byName.get(qualifiedName);
      if (tool) return visibility.toGatewayTool(tool);
      const refusal = await quarantineRefusal(qualifiedName, visible);
      if (refusal) throw refusal;
      return undefined;
    },

    async callTool(session, qualifiedName, args, options = {}) {
      const visible = await visibility.index(session);
      const tool = visible.byName.get(qualifiedName);
      if (!tool) throw (await quarantineRefusal(qualifiedName, visible)) ?? notFound('tool', qualifiedName);
      if (!tool.pluginName) {
        throw new QuiverError(ErrorCodes.unavailable, `tool '${qualifiedName}' has no plugin process to run it (it was registered through the catalog API)`);
      }
      const stable = await deps.caches.specFor(tool.pluginName);
      // Issue #27: bound to the session's owner first, so even the pin screening's tool listing
      // of a per-user remote plugin runs on the caller's own authorization (or fails closed).
      const ownedStable = deps.owned ? await deps.owned(stable, session) : stable;
      await deps.pinGuard?.beforeCall(ownedStable, tool.name, qualifiedName);
      // During a rollout the session's slot serves it (only tools the canary serves unchanged go there).
      const routedSpec = deps.slots?.route(tool.pluginName, stable, session.sessionId, tool.name) ?? stable;
      const spec = routedSpec === stable ? ownedStable : deps.owned ? await deps.owned(routedSpec, session) : routedSpec;
      const annotations = tool.annotations as { readOnlyHint?: boolean; idempotentHint?: boolean };
      const result = await deps.supervisor.callTool(spec, tool.name, args, {
        ...(options.signal ? { signal: options.signal } : {}),
        // Issue #12: the plugin's requests, logs and progress go to this session's client only.
        ...(options.client ? { caller: options.client } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        annotations: {
          ...(typeof annotations.readOnlyHint === 'boolean' ? { readOnlyHint: annotations.readOnlyHint } : {}),
          ...(typeof annotations.idempotentHint === 'boolean' ? { idempotentHint: annotations.idempotentHint } : {}),
        },
      });
      // Issue #23: what the plugin returns is what the model reads next; orders hidden in it are flagged, never passed on silently.
      return screenToolResult(withPathHint(result, spec, deps.supervisor.hiddenPaths?.() ?? []), qualifiedName, visible.ownToolNames(tool.pluginName));
    },
  };
}
