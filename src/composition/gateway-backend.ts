/**
 * @module composition/gateway-backend
 * The production `GatewayBackend`: the MCP gateway's one seam, implemented over the
 * selection engine (visibility and ranking), the plugin service (launch specs, manifests,
 * marketplace) and the runtime supervisor (calls, resources, prompts). Part of the app
 * layer: it only wires services, it decides nothing the services already decide.
 *
 * Visibility is the selection engine's `visibleTools` (policy, enablement, organisation;
 * fail closed). Silent plugins are middleware-only: never listed, searched or callable.
 */
import type { Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { QuiverError, ErrorCodes, notFound } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { silentLogger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import type { SelectionEngine } from '../selection/index.ts';
import { CATALOG_CHANGED_CHANNEL } from '../selection/index.ts';
import type { SelectionCandidate } from '../store/repositories/candidates.ts';
import type { PluginService, PublicPlugin } from '../plugins/service.ts';
import type { Supervisor, UpstreamSpec } from '../runtime/index.ts';
import type {
  AggregatedList,
  BackendSession,
  CapabilitySummary,
  CatalogChange,
  GatewayBackend,
  ExposureMode,
  GatewayTool,
  SessionIdentity,
  Visibility,
} from '../gateway/backend.ts';
import { EXPOSURE_MODES } from '../gateway/backend.ts';
import { toolDefinitionTokens } from '../gateway/meta-tools.ts';

/** What the backend is built from. */
export interface GatewayBackendDeps {
  db: Database;
  selection: SelectionEngine;
  plugins: PluginService;
  supervisor: Supervisor;
  logger?: Logger;
  /** How long launch specs and plugin metadata are reused (ms, default 10 s); changes clear them at once. */
  cacheTtlMs?: number;
  now?: () => number;
}

interface Timed<T> {
  value: T;
  at: number;
}

const asStrings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const asText = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

/** Builds the production backend. */
export function createGatewayBackend(deps: GatewayBackendDeps): GatewayBackend & {
  /** The exposure mode a workspace sets for its sessions (seed 002 tiers; per-connection flags win). */
  exposureModeFor(identity: SessionIdentity): ExposureMode | undefined;
  /** Reloads the per-workspace exposure modes (also done on every catalog change). */
  refreshExposureModes(): Promise<void>;
  close(): Promise<void>;
} {
  const logger = deps.logger ?? silentLogger;
  const ttl = deps.cacheTtlMs ?? 10_000;
  const now = deps.now ?? Date.now;
  const specs = new Map<string, Timed<Promise<UpstreamSpec>>>();
  let pluginList: Timed<Promise<Map<string, PublicPlugin>>> | undefined;
  const gatewayTools = new WeakMap<SelectionCandidate, GatewayTool>();
  const listeners = new Set<(change: CatalogChange) => void>();
  let unlisten: Promise<() => Promise<void>> | undefined;

  let exposureModes = new Map<string, string>();

  async function refreshExposureModes(): Promise<void> {
    try {
      exposureModes = await deps.plugins.workspaceExposureModes();
    } catch (error) {
      // Relevance, not security: keep the modes we had.
      logger.warn({ err: error }, 'gateway: could not load workspace exposure modes');
    }
  }

  function clearCaches(): void {
    specs.clear();
    pluginList = undefined;
    void refreshExposureModes();
  }

  function contextOf(session: BackendSession) {
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

  function allowedByExpertList(session: BackendSession, qualifiedName: string): boolean {
    return session.expertAllowList === undefined || session.expertAllowList.includes(qualifiedName);
  }

  function toGatewayTool(candidate: SelectionCandidate, score?: number): GatewayTool {
    let tool = gatewayTools.get(candidate);
    if (!tool) {
      const inputSchema = { type: 'object' as const, ...candidate.parameters };
      const base: GatewayTool = {
        qualifiedName: candidate.qualifiedName,
        pluginName: candidate.pluginName ?? '',
        ...(candidate.displayName ? { title: candidate.displayName } : {}),
        description: candidate.description,
        inputSchema,
        ...(Object.keys(candidate.annotations).length > 0 ? { annotations: candidate.annotations as GatewayTool['annotations'] } : {}),
        visibility: candidate.visibility,
        pinned: candidate.isAlwaysPinned,
        tokens: 0,
      };
      const definition: Tool = { name: base.qualifiedName, description: base.description, inputSchema };
      base.tokens = toolDefinitionTokens(definition);
      tool = base;
      gatewayTools.set(candidate, tool);
    }
    return score === undefined ? tool : { ...tool, score };
  }

  /** The session's visible, non-silent tools (expert allow-list applied). */
  async function visible(session: BackendSession): Promise<SelectionCandidate[]> {
    const { tools } = await deps.selection.visibleTools(contextOf(session));
    return tools.filter((tool) => tool.visibility !== 'silent' && allowedByExpertList(session, tool.qualifiedName));
  }

  async function plugins(): Promise<Map<string, PublicPlugin>> {
    if (!pluginList || now() - pluginList.at > ttl) {
      const loading = deps.plugins.list().then((list) => new Map(list.map((p) => [p.name, p])));
      loading.catch(() => {
        if (pluginList?.value === loading) pluginList = undefined;
      });
      pluginList = { value: loading, at: now() };
    }
    return pluginList.value;
  }

  async function specFor(pluginName: string): Promise<UpstreamSpec> {
    const cached = specs.get(pluginName);
    if (cached && now() - cached.at <= ttl) return cached.value;
    const loading = deps.plugins.upstreamSpec(pluginName);
    loading.catch(() => specs.delete(pluginName));
    specs.set(pluginName, { value: loading, at: now() });
    return loading;
  }

  /** Plugins the session can see (at least one visible tool), by name. */
  async function visiblePlugins(session: BackendSession): Promise<Map<string, SelectionCandidate[]>> {
    const byPlugin = new Map<string, SelectionCandidate[]>();
    for (const tool of await visible(session)) {
      if (!tool.pluginName) continue;
      const list = byPlugin.get(tool.pluginName) ?? [];
      list.push(tool);
      byPlugin.set(tool.pluginName, list);
    }
    return byPlugin;
  }

  async function requireVisiblePlugin(session: BackendSession, pluginName: string): Promise<void> {
    if (!(await visiblePlugins(session)).has(pluginName)) throw notFound('plugin', pluginName);
  }

  async function fanOut<T>(session: BackendSession, list: (spec: UpstreamSpec) => Promise<T[]>, what: string): Promise<AggregatedList<T>> {
    const names = [...(await visiblePlugins(session)).keys()];
    const known = await plugins();
    // Plugins that registered through sync have no process to ask.
    const launchable = names.filter((name) => known.get(name)?.launch);
    const settled = await Promise.allSettled(launchable.map(async (name) => ({ name, items: await list(await specFor(name)) })));
    const result: AggregatedList<T> = { items: [], warnings: [] };
    settled.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') {
        for (const item of outcome.value.items) result.items.push({ pluginName: outcome.value.name, item });
      } else {
        result.warnings.push(`${launchable[i]}: ${what} failed: ${(outcome.reason as Error).message}`);
      }
    });
    return result;
  }

  function capabilityOf(plugin: PublicPlugin | undefined, name: string, tools: SelectionCandidate[]): CapabilitySummary {
    const manifest = (plugin?.manifest ?? {}) as Record<string, unknown>;
    const category = asText(manifest['category']);
    const stability = asText(manifest['stability']);
    return {
      name,
      title: asText(manifest['title']) ?? plugin?.displayName ?? name,
      summary: asText(manifest['summary']) ?? plugin?.description ?? '',
      whenToUse: asStrings(manifest['whenToUse']),
      whenNotToUse: asStrings(manifest['whenNotToUse']),
      tags: asStrings(manifest['tags']),
      ...(category ? { category } : {}),
      ...(stability === 'stable' || stability === 'beta' || stability === 'experimental' ? { stability } : {}),
      visibility: (plugin?.visibility ?? 'on-demand') as Visibility,
      toolCount: tools.length,
    };
  }

  return {
    exposureModeFor(identity) {
      const mode = exposureModes.get(identity.workspace);
      return (EXPOSURE_MODES as readonly string[]).includes(mode ?? '') ? (mode as ExposureMode) : undefined;
    },
    refreshExposureModes,

    async searchTools(session, query, options) {
      const limit = Math.max(1, Math.min(50, options.limit));
      const result = await deps.selection.selectTools({ query, context: contextOf(session), k: limit, provider: 'mcp' });
      const { tools: candidates } = await deps.selection.visibleTools(contextOf(session));
      const byId = new Map(candidates.map((c) => [c.id, c]));
      const tools: GatewayTool[] = [];
      for (const selected of result.tools) {
        const candidate = byId.get(selected.id);
        if (!candidate || candidate.visibility === 'silent' || !allowedByExpertList(session, candidate.qualifiedName)) continue;
        tools.push(toGatewayTool(candidate, selected.score));
      }
      return { tools, ...(result.metadata.eventId ? { eventId: result.metadata.eventId } : {}), warnings: result.metadata.warnings };
    },

    async listVisibleTools(session, options = {}) {
      const tools = await visible(session);
      const tiers = options.visibility;
      return tools
        .filter((tool) => !tiers || tiers.includes(tool.visibility) || (options.includePinned === true && tool.isAlwaysPinned))
        .map((tool) => toGatewayTool(tool));
    },

    async getTool(session, qualifiedName) {
      const tool = (await visible(session)).find((t) => t.qualifiedName === qualifiedName);
      return tool ? toGatewayTool(tool) : undefined;
    },

    async callTool(session, qualifiedName, args, options = {}) {
      const tool = (await visible(session)).find((t) => t.qualifiedName === qualifiedName);
      if (!tool) throw notFound('tool', qualifiedName);
      if (!tool.pluginName) {
        throw new QuiverError(ErrorCodes.unavailable, `tool '${qualifiedName}' has no plugin process to run it (it was registered through the catalog API)`);
      }
      const spec = await specFor(tool.pluginName);
      const annotations = tool.annotations as { readOnlyHint?: boolean; idempotentHint?: boolean };
      return deps.supervisor.callTool(spec, tool.name, args, {
        ...(options.signal ? { signal: options.signal } : {}),
        annotations: {
          ...(typeof annotations.readOnlyHint === 'boolean' ? { readOnlyHint: annotations.readOnlyHint } : {}),
          ...(typeof annotations.idempotentHint === 'boolean' ? { idempotentHint: annotations.idempotentHint } : {}),
        },
      });
    },

    async recordOutcome(eventId, outcome) {
      // Queued and written in batches (issue #18): the gateway reports one after every search,
      // so a transaction each would put the database on the search path. It is feedback:
      // the engine logs a failure, never throws it into the session.
      deps.selection.queueOutcome(eventId, outcome);
    },

    async recordCall(session, record) {
      logger.debug({ session: session.sessionId, ...record }, 'gateway call');
    },

    async listCapabilities(session) {
      const known = await plugins();
      return [...(await visiblePlugins(session))].map(([name, tools]) => capabilityOf(known.get(name), name, tools));
    },

    async capabilityTools(session, pluginName) {
      const tools = (await visiblePlugins(session)).get(pluginName);
      return tools?.map((tool) => toGatewayTool(tool));
    },

    listResources: (session) => fanOut<Resource>(session, (spec) => deps.supervisor.listResources(spec), 'resources/list'),

    async readResource(session, pluginName, uri, options = {}) {
      await requireVisiblePlugin(session, pluginName);
      return deps.supervisor.readResource(await specFor(pluginName), uri, options.signal ? { signal: options.signal } : {});
    },

    listPrompts: (session) => fanOut<Prompt>(session, (spec) => deps.supervisor.listPrompts(spec), 'prompts/list'),

    async getPrompt(session, pluginName, name, args, options = {}) {
      await requireVisiblePlugin(session, pluginName);
      return deps.supervisor.getPrompt(await specFor(pluginName), name, args, options.signal ? { signal: options.signal } : {});
    },

    async suggestMarketplace(_session, query, limit) {
      const hits = await deps.plugins.searchMarketplace(query, limit * 2);
      return hits
        .filter((hit) => hit.installable && hit.installedAs === null)
        .slice(0, limit)
        .map((hit) => ({
          name: hit.name,
          title: hit.title ?? hit.name,
          summary: hit.description,
          install: `quiver plugin add ${hit.install}`,
        }));
    },

    async catalogOverview(session) {
      const known = await plugins();
      const byPlugin = await visiblePlugins(session);
      const plugins_ = [...byPlugin].map(([name, tools]) => {
        const capability = capabilityOf(known.get(name), name, tools);
        return {
          name,
          title: capability.title,
          ...(capability.category ? { category: capability.category } : {}),
          toolCount: tools.length,
          ...(capability.summary ? { summary: capability.summary } : {}),
        };
      });
      const loose = (await visible(session)).filter((tool) => !tool.pluginName).length;
      return { toolCount: plugins_.reduce((sum, p) => sum + p.toolCount, 0) + loose, plugins: plugins_ };
    },

    onCatalogChanged(listener) {
      listeners.add(listener);
      unlisten ??= deps.db.listen(CATALOG_CHANGED_CHANNEL, () => {
        clearCaches();
        for (const each of listeners) {
          try {
            each({});
          } catch (error) {
            logger.warn({ err: error }, 'gateway: catalog listener threw');
          }
        }
      });
      unlisten.catch((error) => logger.warn({ err: error }, 'gateway: could not listen for catalog changes'));
      return () => {
        listeners.delete(listener);
      };
    },

    async close() {
      listeners.clear();
      if (unlisten) await (await unlisten)().catch(() => {});
    },
  };
}
