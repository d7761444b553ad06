/**
 * @module gateway/testing/local-backend
 * THE TEST BACKEND of the gateway: a real, in-memory `GatewayBackend` over real MCP servers
 * started as processes with the SDK client over stdio, with a plain BM25 search. It exists so
 * the gateway is tested end to end (real servers, real calls, real crashes) and benchmarked
 * before the production backend over selection / runtime / plugins is wired. It is not that
 * backend: no database, no breakers, no retries; one process per plugin, restarted on the
 * next call after it dies.
 *
 * Access follows seed 004 §9: a plugin may be restricted to workspaces, and granted to
 * organisations, roles or users (any grant suffices; no grants = everyone); the session's
 * expert allow-list narrows further. What a session may not see does not exist for it.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Prompt,
  type Resource,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import { silentLogger, type Logger } from '../../core/logger.ts';
import { formatQualifiedName, isValidToolName, parseQualifiedName } from '../../core/names.ts';
import type {
  AggregatedList,
  BackendSession,
  CallRecord,
  CapabilitySummary,
  CatalogChange,
  GatewayBackend,
  GatewayTool,
  MarketplaceSuggestion,
  Visibility,
} from '../backend.ts';
import { UPSTREAM_ERROR } from '../errors.ts';
import { toMcpTool, toolDefinitionTokens } from '../meta-tools.ts';
import { withoutMcpErrorPrefix } from '../../core/mcp-error-text.ts';

/** A plugin the test backend runs. */
export interface LocalPluginSpec {
  /** Plugin name (kebab-case): the `plugin` of `plugin__tool`. */
  name: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Seed 002 manifest fields. */
  manifest?: {
    title?: string;
    summary?: string;
    whenToUse?: string[];
    whenNotToUse?: string[];
    tags?: string[];
    category?: string;
    visibility?: Visibility;
    stability?: 'stable' | 'beta' | 'experimental';
  };
  /** Per-tool visibility overrides (tool name → tier). */
  toolVisibility?: Record<string, Visibility>;
  /** Tool names pinned for every session. */
  pinned?: string[];
  /** Workspaces the plugin is enabled in (absent: all). */
  workspaces?: string[];
  /** Seed 004 §9.1 grants: organisations, roles, users (any match suffices; absent: everyone). */
  grants?: { orgs?: string[]; roles?: string[]; users?: string[] };
  /** Per-call timeout, ms (default 30 s). */
  callTimeoutMs?: number;
}

export interface LocalBackendOptions {
  plugins: LocalPluginSpec[];
  /** Installable plugins for marketplace suggestions. */
  marketplace?: MarketplaceSuggestion[];
  logger?: Logger;
  /** Where plugin stderr goes (default: dropped). */
  pluginStderr?: 'inherit' | 'ignore';
}

/** The test backend, with what it recorded, for assertions. */
export interface LocalTestBackend extends GatewayBackend {
  readonly searches: Array<{ eventId: string; sessionId: string; query: string; offered: string[] }>;
  readonly outcomes: Array<{ eventId: string; toolsCalled: string[]; success: boolean }>;
  readonly calls: Array<CallRecord & { sessionId: string; orgId: string | null }>;
  /** Plugins that failed to start, and other trouble. */
  readonly warnings: string[];
  /** Starts a plugin and announces the catalog change. */
  addPlugin(spec: LocalPluginSpec): Promise<void>;
  /** Stops a plugin and announces the catalog change. */
  removePlugin(name: string): Promise<void>;
  /** The process id of a running plugin. */
  pluginPid(name: string): number | undefined;
  /** Every tool of every plugin, ignoring access (for benchmarks' bookkeeping). */
  allTools(): GatewayTool[];
  close(): Promise<void>;
}

interface PluginState {
  spec: LocalPluginSpec;
  client: Client | undefined;
  transport: StdioClientTransport | undefined;
  connecting: Promise<Client> | undefined;
  tools: GatewayTool[];
  originalNames: Map<string, string>;
  documents: Map<string, Map<string, number>>;
  lengths: Map<string, number>;
}

const STOPWORDS = new Set(['a', 'an', 'the', 'to', 'of', 'for', 'and', 'or', 'in', 'on', 'with', 'by', 'is', 'it', 'me', 'my', 'i', 'from', 'that', 'this', 'be', 'as', 'at', 'some', 'can', 'you', 'want', 'need', 'please']);

/** Lowercase words, camelCase and snake_case split, naive plural folding. */
export function lexicalTokens(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1 && !STOPWORDS.has(word))
    .map((word) => (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word));
}

function termCounts(words: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

function schemaText(schema: unknown): string {
  const properties = (schema as { properties?: Record<string, { description?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .map(([key, property]) => `${key} ${typeof property?.description === 'string' ? property.description : ''}`)
    .join(' ');
}

/** Starts every plugin (failures become warnings) and returns the backend. */
export async function createLocalTestBackend(options: LocalBackendOptions): Promise<LocalTestBackend> {
  const logger = (options.logger ?? silentLogger).child({ component: 'local-test-backend' });
  const plugins = new Map<string, PluginState>();
  const listeners = new Set<(change: CatalogChange) => void>();
  const searches: LocalTestBackend['searches'] = [];
  const outcomes: LocalTestBackend['outcomes'] = [];
  const calls: LocalTestBackend['calls'] = [];
  const warnings: string[] = [];
  let closed = false;

  function emit(change: CatalogChange): void {
    for (const listener of listeners) listener(change);
  }

  function pluginVisible(plugin: PluginState, session: BackendSession): boolean {
    const { workspaces, grants } = plugin.spec;
    if (workspaces && !workspaces.includes(session.workspace)) return false;
    if (!grants) return true;
    return (
      (session.orgId !== null && (grants.orgs ?? []).includes(session.orgId)) ||
      (session.userId !== null && (grants.users ?? []).includes(session.userId)) ||
      session.roles.some((role) => (grants.roles ?? []).includes(role))
    );
  }

  function toolVisible(tool: GatewayTool, session: BackendSession): boolean {
    if (session.expertAllowList && !session.expertAllowList.includes(tool.qualifiedName)) return false;
    return true;
  }

  function visibleTools(session: BackendSession, includeSilent = false): GatewayTool[] {
    const out: GatewayTool[] = [];
    for (const plugin of plugins.values()) {
      if (!pluginVisible(plugin, session)) continue;
      for (const tool of plugin.tools) {
        if ((includeSilent || tool.visibility !== 'silent') && toolVisible(tool, session)) out.push(tool);
      }
    }
    return out;
  }

  async function loadTools(plugin: PluginState, client: Client): Promise<void> {
    const listed: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const { spec } = plugin;
    const pinned = new Set(spec.pinned ?? []);
    const tools: GatewayTool[] = [];
    const originalNames = new Map<string, string>();
    const documents = new Map<string, Map<string, number>>();
    const lengths = new Map<string, number>();
    for (const tool of listed) {
      if (!isValidToolName(tool.name)) {
        warnings.push(`plugin '${spec.name}': tool '${tool.name}' has an invalid name and is skipped`);
        continue;
      }
      const qualifiedName = formatQualifiedName(spec.name, tool.name);
      const base: GatewayTool = {
        qualifiedName,
        pluginName: spec.name,
        ...(tool.title ? { title: tool.title } : {}),
        description: tool.description ?? '',
        inputSchema: tool.inputSchema,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
        ...(tool.annotations ? { annotations: tool.annotations } : {}),
        visibility: spec.toolVisibility?.[tool.name] ?? spec.manifest?.visibility ?? 'on-demand',
        ...(pinned.has(tool.name) ? { pinned: true } : {}),
        tokens: 0,
      };
      base.tokens = toolDefinitionTokens(toMcpTool(base));
      tools.push(base);
      originalNames.set(qualifiedName, tool.name);
      // Name words count three times: a tool's name is its strongest signal.
      const words = [
        ...lexicalTokens(tool.name),
        ...lexicalTokens(tool.name),
        ...lexicalTokens(tool.name),
        ...lexicalTokens(`${tool.title ?? ''} ${tool.description ?? ''} ${schemaText(tool.inputSchema)}`),
        ...lexicalTokens(`${spec.manifest?.title ?? ''} ${(spec.manifest?.tags ?? []).join(' ')}`),
      ];
      documents.set(qualifiedName, termCounts(words));
      lengths.set(qualifiedName, words.length);
    }
    plugin.tools = tools;
    plugin.originalNames = originalNames;
    plugin.documents = documents;
    plugin.lengths = lengths;
  }

  async function connect(plugin: PluginState): Promise<Client> {
    if (plugin.client) return plugin.client;
    if (plugin.connecting) return plugin.connecting;
    const { spec } = plugin;
    plugin.connecting = (async () => {
      const transport = new StdioClientTransport({
        command: spec.command,
        args: spec.args ?? [],
        env: { ...getDefaultEnvironment(), ...spec.env },
        ...(spec.cwd ? { cwd: spec.cwd } : {}),
        stderr: options.pluginStderr ?? 'ignore',
      });
      const client = new Client({ name: 'quiver-local-test-backend', version: '0.1.0' });
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        try {
          await loadTools(plugin, client);
          emit({});
        } catch (error) {
          logger.warn({ err: error, plugin: spec.name }, 'reloading tools failed');
        }
      });
      client.onclose = () => {
        if (plugin.client === client) {
          plugin.client = undefined;
          plugin.transport = undefined;
        }
      };
      await client.connect(transport);
      plugin.transport = transport;
      plugin.client = client;
      return client;
    })();
    try {
      return await plugin.connecting;
    } finally {
      plugin.connecting = undefined;
    }
  }

  async function addPlugin(spec: LocalPluginSpec, announce: boolean): Promise<void> {
    if (plugins.has(spec.name)) throw new QuiverError(ErrorCodes.conflict, `plugin '${spec.name}' is already running`);
    const plugin: PluginState = {
      spec,
      client: undefined,
      transport: undefined,
      connecting: undefined,
      tools: [],
      originalNames: new Map(),
      documents: new Map(),
      lengths: new Map(),
    };
    plugins.set(spec.name, plugin);
    try {
      const client = await connect(plugin);
      await loadTools(plugin, client);
    } catch (error) {
      warnings.push(`plugin '${spec.name}' did not start: ${(error as Error).message}`);
      logger.warn({ err: error, plugin: spec.name }, 'plugin did not start');
    }
    if (announce) emit({});
  }

  function pluginOf(session: BackendSession, qualifiedName: string): { plugin: PluginState; tool: GatewayTool } | undefined {
    const parsed = parseQualifiedName(qualifiedName);
    if (!parsed) return undefined;
    const plugin = plugins.get(parsed.plugin);
    if (!plugin || !pluginVisible(plugin, session)) return undefined;
    const tool = plugin.tools.find((candidate) => candidate.qualifiedName === qualifiedName);
    if (!tool || !toolVisible(tool, session)) return undefined;
    return { plugin, tool };
  }

  function visiblePlugin(session: BackendSession, name: string): PluginState | undefined {
    const plugin = plugins.get(name);
    return plugin && pluginVisible(plugin, session) && plugin.spec.manifest?.visibility !== 'silent' ? plugin : undefined;
  }

  /** Maps what the SDK client throws to the backend's error contract. */
  function upstreamError(plugin: PluginState, what: string, error: unknown, signal: AbortSignal | undefined): QuiverError {
    if (signal?.aborted) return new QuiverError(ErrorCodes.unavailable, `${what} was cancelled`, { cause: error });
    if (error instanceof McpError) {
      if (error.code === ErrorCode.InvalidParams) return new QuiverError(ErrorCodes.invalidInput, error.message, { cause: error });
      if (error.code === ErrorCode.RequestTimeout) {
        return new QuiverError(ErrorCodes.timeout, `plugin '${plugin.spec.name}' did not answer ${what} within ${plugin.spec.callTimeoutMs ?? 30_000} ms`, { cause: error });
      }
      if (error.code === ErrorCode.ConnectionClosed) {
        return new QuiverError(ErrorCodes.unavailable, `plugin '${plugin.spec.name}' exited during ${what}`, { cause: error });
      }
      return new QuiverError(UPSTREAM_ERROR, `plugin '${plugin.spec.name}' answered ${what} with an error: ${withoutMcpErrorPrefix(error.message)}`, { cause: error, kind: 'operational' });
    }
    return new QuiverError(ErrorCodes.unavailable, `plugin '${plugin.spec.name}' is unavailable: ${(error as Error).message}`, { cause: error });
  }

  async function clientFor(plugin: PluginState): Promise<Client> {
    try {
      return await connect(plugin);
    } catch (error) {
      throw new QuiverError(ErrorCodes.unavailable, `plugin '${plugin.spec.name}' could not be started: ${(error as Error).message}`, { cause: error });
    }
  }

  async function fanOut<T>(
    session: BackendSession,
    capability: 'resources' | 'prompts',
    list: (client: Client) => Promise<T[]>,
  ): Promise<AggregatedList<T>> {
    const targets = [...plugins.values()].filter((plugin) => pluginVisible(plugin, session) && plugin.spec.manifest?.visibility !== 'silent');
    const settled = await Promise.allSettled(
      targets.map(async (plugin) => {
        const client = await clientFor(plugin);
        if (!client.getServerCapabilities()?.[capability]) return [];
        return (await list(client)).map((item) => ({ pluginName: plugin.spec.name, item }));
      }),
    );
    const items: AggregatedList<T>['items'] = [];
    const failures: string[] = [];
    settled.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') items.push(...outcome.value);
      else failures.push(`plugin '${targets[index]!.spec.name}': ${(outcome.reason as Error).message}`);
    });
    return { items, warnings: failures };
  }

  // Start in parallel; the map keeps the configured order because addPlugin inserts before awaiting.
  await Promise.all(options.plugins.map((spec) => addPlugin(spec, false)));

  return {
    searches,
    outcomes,
    calls,
    warnings,

    async searchTools(session, query, { limit }) {
      // RBAC first, then ranking (seed 004 §9.1: filtering inside the query, not after it).
      const candidates = visibleTools(session);
      const terms = [...new Set(lexicalTokens(query))];
      const documentOf = (tool: GatewayTool) => plugins.get(tool.pluginName)?.documents.get(tool.qualifiedName) ?? new Map<string, number>();
      const lengthOf = (tool: GatewayTool) => plugins.get(tool.pluginName)?.lengths.get(tool.qualifiedName) ?? 0;
      const averageLength = candidates.reduce((sum, tool) => sum + lengthOf(tool), 0) / Math.max(1, candidates.length);
      const documentFrequency = new Map<string, number>();
      for (const term of terms) documentFrequency.set(term, candidates.filter((tool) => documentOf(tool).has(term)).length);
      const k1 = 1.2;
      const b = 0.75;
      const scored = candidates
        .map((tool) => {
          const document = documentOf(tool);
          let score = 0;
          for (const term of terms) {
            const frequency = document.get(term) ?? 0;
            if (frequency === 0) continue;
            const df = documentFrequency.get(term) ?? 0;
            const idf = Math.log(1 + (candidates.length - df + 0.5) / (df + 0.5));
            score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * lengthOf(tool)) / Math.max(1, averageLength)));
          }
          return { tool, score };
        })
        .filter((entry) => entry.score > 0)
        .sort((x, y) => y.score - x.score || x.tool.qualifiedName.localeCompare(y.tool.qualifiedName))
        .slice(0, limit);
      const eventId = randomUUID();
      const tools = scored.map((entry) => ({ ...entry.tool, score: Math.round(entry.score * 1000) / 1000 }));
      searches.push({ eventId, sessionId: session.sessionId, query, offered: tools.map((tool) => tool.qualifiedName) });
      return { tools, eventId, warnings: terms.length === 0 ? ['the query has no searchable words'] : [] };
    },

    async listVisibleTools(session, listOptions = {}) {
      const all = visibleTools(session);
      if (!listOptions.visibility) return all;
      const tiers = new Set(listOptions.visibility);
      return all.filter((tool) => tiers.has(tool.visibility) || (listOptions.includePinned === true && tool.pinned === true));
    },

    async getTool(session, qualifiedName) {
      return pluginOf(session, qualifiedName)?.tool;
    },

    async callTool(session, qualifiedName, args, callOptions = {}) {
      const found = pluginOf(session, qualifiedName);
      if (!found) throw new QuiverError(ErrorCodes.notFound, `tool '${qualifiedName}' was not found`);
      const { plugin } = found;
      const client = await clientFor(plugin);
      try {
        const result = await client.callTool(
          { name: plugin.originalNames.get(qualifiedName)!, arguments: args },
          undefined,
          { ...(callOptions.signal ? { signal: callOptions.signal } : {}), timeout: plugin.spec.callTimeoutMs ?? 30_000 },
        );
        return result as CallToolResult;
      } catch (error) {
        throw upstreamError(plugin, `a call of '${qualifiedName}'`, error, callOptions.signal);
      }
    },

    async recordOutcome(eventId, outcome) {
      outcomes.push({ eventId, ...outcome });
    },

    async recordCall(session, record) {
      calls.push({ ...record, sessionId: session.sessionId, orgId: session.orgId });
    },

    async listCapabilities(session) {
      const out: CapabilitySummary[] = [];
      for (const plugin of plugins.values()) {
        if (!pluginVisible(plugin, session) || plugin.spec.manifest?.visibility === 'silent') continue;
        const manifest = plugin.spec.manifest ?? {};
        out.push({
          name: plugin.spec.name,
          title: manifest.title ?? plugin.spec.name,
          summary: manifest.summary ?? '',
          whenToUse: manifest.whenToUse ?? [],
          ...(manifest.whenNotToUse ? { whenNotToUse: manifest.whenNotToUse } : {}),
          tags: manifest.tags ?? [],
          ...(manifest.category ? { category: manifest.category } : {}),
          ...(manifest.stability ? { stability: manifest.stability } : {}),
          visibility: manifest.visibility ?? 'on-demand',
          toolCount: plugin.tools.filter((tool) => tool.visibility !== 'silent' && toolVisible(tool, session)).length,
        });
      }
      return out;
    },

    async capabilityTools(session, pluginName) {
      const plugin = visiblePlugin(session, pluginName);
      if (!plugin) return undefined;
      return plugin.tools.filter((tool) => tool.visibility !== 'silent' && toolVisible(tool, session));
    },

    listResources(session) {
      return fanOut<Resource>(session, 'resources', async (client) => {
        const out: Resource[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listResources(cursor ? { cursor } : undefined);
          out.push(...page.resources);
          cursor = page.nextCursor;
        } while (cursor);
        return out;
      });
    },

    async readResource(session, pluginName, uri, callOptions = {}) {
      const plugin = visiblePlugin(session, pluginName);
      if (!plugin) throw new QuiverError(ErrorCodes.notFound, `resource '${uri}' was not found`);
      const client = await clientFor(plugin);
      try {
        return await client.readResource({ uri }, callOptions.signal ? { signal: callOptions.signal } : undefined);
      } catch (error) {
        throw upstreamError(plugin, `a read of '${uri}'`, error, callOptions.signal);
      }
    },

    listPrompts(session) {
      return fanOut<Prompt>(session, 'prompts', async (client) => (await client.listPrompts()).prompts);
    },

    async getPrompt(session, pluginName, name, args, callOptions = {}) {
      const plugin = visiblePlugin(session, pluginName);
      if (!plugin) throw new QuiverError(ErrorCodes.notFound, `prompt '${name}' was not found`);
      const client = await clientFor(plugin);
      try {
        return await client.getPrompt({ name, arguments: args }, callOptions.signal ? { signal: callOptions.signal } : undefined);
      } catch (error) {
        throw upstreamError(plugin, `prompt '${name}'`, error, callOptions.signal);
      }
    },

    async suggestMarketplace(_session, query, limit) {
      const terms = new Set(lexicalTokens(query));
      return (options.marketplace ?? [])
        .filter((entry) => !plugins.has(entry.name))
        .map((entry) => ({
          entry,
          score: lexicalTokens(`${entry.name} ${entry.title} ${entry.summary} ${(entry.tools ?? []).join(' ')} ${entry.category ?? ''}`).filter((word) => terms.has(word)).length,
        }))
        .filter((scored) => scored.score > 0)
        .sort((x, y) => y.score - x.score)
        .slice(0, limit)
        .map((scored) => scored.entry);
    },

    async catalogOverview(session) {
      const overview = { toolCount: 0, plugins: [] as Array<{ name: string; title: string; category?: string; toolCount: number; summary?: string }> };
      for (const plugin of plugins.values()) {
        if (!pluginVisible(plugin, session) || plugin.spec.manifest?.visibility === 'silent') continue;
        const count = plugin.tools.filter((tool) => tool.visibility !== 'silent' && toolVisible(tool, session)).length;
        if (count === 0) continue;
        overview.toolCount += count;
        const manifest = plugin.spec.manifest ?? {};
        overview.plugins.push({
          name: plugin.spec.name,
          title: manifest.title ?? plugin.spec.name,
          ...(manifest.category ? { category: manifest.category } : {}),
          toolCount: count,
          ...(manifest.summary ? { summary: manifest.summary } : {}),
        });
      }
      return overview;
    },

    onCatalogChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    addPlugin: (spec) => addPlugin(spec, true),

    async removePlugin(name) {
      const plugin = plugins.get(name);
      if (!plugin) throw new QuiverError(ErrorCodes.notFound, `plugin '${name}' is not running`);
      plugins.delete(name);
      await plugin.client?.close().catch(() => {});
      emit({});
    },

    pluginPid: (name) => plugins.get(name)?.transport?.pid ?? undefined,

    allTools: () => [...plugins.values()].flatMap((plugin) => plugin.tools),

    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      await Promise.allSettled([...plugins.values()].map((plugin) => plugin.client?.close()));
      plugins.clear();
    },
  };
}
