/**
 * @module gateway/gateway
 * Quiver as one MCP endpoint (DESIGN §3.8, seed 004). `createGateway` makes per-client
 * sessions, each with its own low-level MCP `Server` (tool lists differ per session and
 * change while it runs), bound to a `SessionIdentity`. A session exposes, by exposure mode:
 * - `search` (default): `search_tools` + `call_tool`, the always-visible and pinned tools,
 *   and what the session discovered (seed 004 §3);
 * - `capabilities`: `list_capabilities` / `load_capability` (seed 002) + `call_tool`;
 * - `all`: every enabled, non-silent tool.
 * It keeps the bounded tool context (§6), the iteration guard (§7), redundant-search
 * detection (§8), proxies calls, resources and prompts to the backend, and closes the
 * selection feedback loop itself (records outcomes and calls).
 *
 * @example
 * const gateway = createGateway({ backend });
 * const session = await gateway.openSession({ workspace: 'default', project: null, orgId: null, userId: null, roles: [], tier: null });
 * await session.connect(new StdioServerTransport());
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { silentLogger, type Logger } from '../core/logger.ts';
import { jsonSafetyCheck } from '../core/validation.ts';
import type {
  BackendSession,
  CatalogChange,
  CatalogOverview,
  ExposureMode,
  GatewayBackend,
  GatewayTool,
  SessionIdentity,
} from './backend.ts';
import { overloadedRequest, requestFailure, sendBareErrorMessages, toolCallFailure, unknownToolError } from './errors.ts';
import { DEFAULT_GUARD_OPTIONS, IterationGuard, loopGuidance, type IterationGuardOptions } from './iteration-guard.ts';
import {
  CALL_TOOL,
  LIST_CAPABILITIES,
  LOAD_CAPABILITY,
  META_TOOL_NAMES,
  SEARCH_TOOLS,
  callToolDefinition,
  formatPromptName,
  formatResourceUri,
  listCapabilitiesDefinition,
  loadCapabilityDefinition,
  parsePromptName,
  parseResourceUri,
  searchToolsDefinition,
  searchToolsDescription,
  toMcpTool,
  toolDefinitionTokens,
} from './meta-tools.ts';
import { DEFAULT_SEARCH_HISTORY_OPTIONS, SearchHistory, type SearchHistoryOptions } from './search-history.ts';
import { SessionRegistry, type ReleasedSession, type SessionOwner } from './session-registry.ts';
import { Admission, overloaded, type AdmissionOptions } from './admission.ts';
import { canonicalJson } from '../core/hash.ts';
import { ToolContext } from './tool-context.ts';
import { QUIVER_VERSION } from '../core/version.ts';

/** Tunables of the gateway; every field has a default. */
export interface GatewayOptions {
  serverInfo?: { name: string; version: string };
  /** Exposure mode when neither the connection nor its workspace says (default `search`). */
  defaultExposureMode?: ExposureMode;
  /** Per-workspace configuration: the mode for an identity, or undefined for the default. */
  exposureModeFor?: (identity: SessionIdentity) => ExposureMode | undefined;
  /** Seed 004 §6: discovered-tool capacity (default 16) and TTL (default 30 min). */
  toolContext?: { capacity?: number; ttlMs?: number };
  search?: {
    /** Tools per search when the model does not say (default 5, seed 004 §4.4). */
    defaultLimit?: number;
    /** Most tools one search may return (default 20). */
    maxLimit?: number;
    /** Fewer internal results than this → marketplace suggestions (default 1, seed 004 §10). */
    marketplaceThreshold?: number;
    /** Most marketplace suggestions (default 3). */
    marketplaceLimit?: number;
    /** Redundant-search detection (seed 004 §8). */
    redundancy?: Partial<Omit<SearchHistoryOptions, 'now'>>;
  };
  /** Seed 004 §7: thresholds, exempt tools and tool-specific guidance (qualified name → text). */
  guard?: Partial<Omit<IterationGuardOptions, 'now'>> & { guidance?: Record<string, string> };
  sessions?: {
    /** Idle sessions are closed after this long (default 5 min). */
    idleTtlMs?: number;
    /** Most live sessions in all; beyond it new sessions are refused, never a live one closed (default 1,000). */
    maxSessions?: number;
    /** Most live sessions per owner key; beyond it the key's least recently active one closes (default 100). */
    maxSessionsPerKey?: number;
    /** Most live sessions per organisation; beyond it its least recently active one closes (default 250). */
    maxSessionsPerOrg?: number;
    /** How often idle sessions are swept (default 60 s or a fifth of the TTL, whichever is shorter; 0 disables the timer). */
    sweepIntervalMs?: number;
  };
  /** Bounded work (issue #18): searches running at once, waiting, and the longest wait before a refusal. */
  admission?: Partial<AdmissionOptions>;
  /** A search's outcome is recorded at the next search, at close, or after this long (default 5 min). */
  outcomeWindowMs?: number;
}

/** Defaults of the session limits and the admission bounds. */
export const DEFAULT_SESSION_LIMITS = Object.freeze({ idleTtlMs: 5 * 60_000, maxSessions: 1000, maxSessionsPerKey: 100, maxSessionsPerOrg: 250 });
export const DEFAULT_ADMISSION: Readonly<AdmissionOptions> = Object.freeze({ maxConcurrent: 64, maxQueued: 1024, maxWaitMs: 5_000 });

export interface CreateGatewayOptions {
  backend: GatewayBackend;
  logger?: Logger;
  /** Milliseconds; injected for tests (default `Date.now`). */
  clock?: () => number;
  options?: GatewayOptions;
}

/** One client's MCP session. */
export interface GatewaySession {
  readonly id: string;
  readonly identity: SessionIdentity;
  readonly mode: ExposureMode;
  /** The session's MCP server; connect it to exactly one transport. */
  readonly server: Server;
  /** Connects the session's server to a transport. */
  connect(transport: Transport): Promise<void>;
  /** Closes the server and transport, records the open outcome. Safe to call twice. */
  close(): Promise<void>;
  /** Resolves once the session is closed (by either side). */
  readonly closed: Promise<void>;
  /** Qualified names of the tools bound right now (meta-tools excluded). */
  boundTools(): string[];
}

/** The gateway: a factory and registry of sessions. */
export interface Gateway {
  /**
   * Opens a session for an identity (loads its always-include tools and catalog overview).
   * `owner` is who the per-tenant limits count it against (default: the identity itself).
   * Throws `rate_limited` (details.retryAfterSeconds) when the gateway holds its most sessions.
   */
  openSession(identity: SessionIdentity, options?: { sessionId?: string; owner?: SessionOwner }): Promise<GatewaySession>;
  /** A live session by id. */
  getSession(id: string): GatewaySession | undefined;
  /** Marks a session active (transports call this on every request). */
  touchSession(id: string): void;
  /** Number of live sessions. */
  readonly sessionCount: number;
  /** True when a new search would be refused at once (fronts answer 503 before doing any work). */
  readonly saturated: boolean;
  /** Closes idle sessions and records stale outcomes; returns how many sessions closed. */
  sweep(): Promise<number>;
  /** Closes every session and stops timers. */
  close(): Promise<void>;
}

// NUL bytes (which the database cannot store) and absurd nesting are InvalidParams at the
// boundary (issue #18, finding 7); a plugin's own arguments may carry NUL text, not 5,000 levels.
const searchArgumentsSchema = z.object({ query: z.string().trim().min(1).max(1000), limit: z.number().int().min(1).optional() }).superRefine(jsonSafetyCheck());
const callToolArgumentsSchema = z.object({
  name: z.string().min(1).max(1000).superRefine(jsonSafetyCheck()),
  arguments: z.record(z.string(), z.unknown()).superRefine(jsonSafetyCheck({ allowNul: true })).optional(),
});
const loadCapabilityArgumentsSchema = z.object({ name: z.string().min(1).max(1000) }).superRefine(jsonSafetyCheck());

interface OpenEvent {
  eventId: string;
  openedAt: number;
  calls: Array<{ name: string; success: boolean }>;
}

type SendNotification = (notification: ServerNotification) => Promise<void>;

/** Creates the gateway. Call `close()` to stop its sweep timer and sessions. */
export function createGateway(options: CreateGatewayOptions): Gateway {
  const { backend } = options;
  const logger = (options.logger ?? silentLogger).child({ component: 'gateway' });
  const now = options.clock ?? Date.now;
  const settings = options.options ?? {};
  const serverInfo = settings.serverInfo ?? { name: 'quiver', version: QUIVER_VERSION };
  const capacity = settings.toolContext?.capacity ?? 16;
  const ttlMs = settings.toolContext?.ttlMs ?? 30 * 60_000;
  const defaultLimit = settings.search?.defaultLimit ?? 5;
  const maxLimit = settings.search?.maxLimit ?? 20;
  const marketplaceThreshold = settings.search?.marketplaceThreshold ?? 1;
  const marketplaceLimit = settings.search?.marketplaceLimit ?? 3;
  const redundancy = { ...DEFAULT_SEARCH_HISTORY_OPTIONS, ...settings.search?.redundancy };
  const { guidance: specificGuidance = {}, ...guardSettings } = settings.guard ?? {};
  const guardOptions = { ...DEFAULT_GUARD_OPTIONS, ...guardSettings };
  const outcomeWindowMs = settings.outcomeWindowMs ?? 5 * 60_000;
  const idleTtlMs = settings.sessions?.idleTtlMs ?? DEFAULT_SESSION_LIMITS.idleTtlMs;
  const registry = new SessionRegistry<SessionState>({
    idleTtlMs,
    maxSessions: settings.sessions?.maxSessions ?? DEFAULT_SESSION_LIMITS.maxSessions,
    maxSessionsPerKey: settings.sessions?.maxSessionsPerKey ?? DEFAULT_SESSION_LIMITS.maxSessionsPerKey,
    maxSessionsPerOrg: settings.sessions?.maxSessionsPerOrg ?? DEFAULT_SESSION_LIMITS.maxSessionsPerOrg,
    now,
  });
  const admission = new Admission({ ...DEFAULT_ADMISSION, ...settings.admission });
  const validators = createValidatorCache(logger);
  let closing = false;

  const unsubscribe = backend.onCatalogChanged((change) => void onCatalogChanged(change));
  const sweepIntervalMs = settings.sessions?.sweepIntervalMs ?? Math.min(60_000, Math.max(1_000, Math.floor(idleTtlMs / 5)));
  const timer = sweepIntervalMs > 0 ? setInterval(() => void sweep(), sweepIntervalMs) : undefined;
  timer?.unref();

  class SessionState implements GatewaySession {
    readonly id: string;
    readonly identity: SessionIdentity;
    readonly backendSession: BackendSession;
    readonly mode: ExposureMode;
    readonly server: Server;
    readonly context = new ToolContext<GatewayTool>({ capacity, ttlMs, now });
    readonly guard = new IterationGuard({ ...guardOptions, now });
    readonly history = new SearchHistory({ ...redundancy, now });
    /** Tools the guard removed (discovered or always-include): hidden until the next search (§7.5). */
    readonly suspended = new Set<string>();
    overview: CatalogOverview = { toolCount: 0, plugins: [] };
    openEvent: OpenEvent | undefined;
    readonly closed: Promise<void>;
    #resolveClosed!: () => void;
    #closing = false;

    constructor(identity: SessionIdentity, id: string, mode: ExposureMode, instructions: string) {
      this.id = id;
      this.identity = Object.freeze({ ...identity });
      this.backendSession = Object.freeze({ ...identity, sessionId: id });
      this.mode = mode;
      this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
      this.server = new Server(serverInfo, {
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true } },
        instructions,
      });
      this.server.onclose = () => void this.close();
      this.server.onerror = (error) => logger.debug({ err: error, sessionId: id }, 'session transport error');
      sendBareErrorMessages(this.server);
      installHandlers(this);
    }

    async connect(transport: Transport): Promise<void> {
      await this.server.connect(transport);
    }

    boundTools(): string[] {
      return this.context.list().filter((tool) => !this.suspended.has(tool.qualifiedName)).map((tool) => tool.qualifiedName);
    }

    async close(): Promise<void> {
      if (this.#closing) return this.closed;
      this.#closing = true;
      registry.delete(this.id);
      flushOutcome(this);
      try {
        await this.server.close();
      } catch (error) {
        logger.debug({ err: error, sessionId: this.id }, 'closing session transport failed');
      }
      logger.debug({ sessionId: this.id }, 'session closed');
      this.#resolveClosed();
    }
  }

  function modeFor(identity: SessionIdentity): ExposureMode {
    return identity.exposureMode ?? settings.exposureModeFor?.(identity) ?? settings.defaultExposureMode ?? 'search';
  }

  /** Loads what a session shows before the model asks: always-include tools and the overview. */
  async function refresh(state: SessionState): Promise<void> {
    const [always, overview] = await Promise.all([
      state.mode === 'all' ? Promise.resolve([]) : backend.listVisibleTools(state.backendSession, { visibility: ['always'], includePinned: true }),
      backend.catalogOverview(state.backendSession),
    ]);
    state.context.setAlwaysInclude(always.filter((tool) => tool.visibility !== 'silent'));
    state.overview = overview;
  }

  function release(released: Array<ReleasedSession<SessionState>>): void {
    for (const { value, id, reason } of released) {
      logger.debug({ sessionId: id, reason }, 'session released');
      void value.close();
    }
  }

  /** Refuses when the gateway is full of live sessions (finding 3: never evict another tenant). */
  function refuseWhenFull(admitted: boolean, retryAfterMs: number): void {
    if (admitted) return;
    const retryAfterSeconds = Math.ceil(retryAfterMs / 1000);
    logger.warn({ sessions: registry.size, retryAfterSeconds }, 'session refused: the gateway holds its most sessions');
    throw overloaded(`${registry.size} live MCP sessions`, retryAfterSeconds);
  }

  async function openSession(identity: SessionIdentity, open: { sessionId?: string; owner?: SessionOwner } = {}): Promise<GatewaySession> {
    if (closing) throw new McpError(ErrorCode.ConnectionClosed, 'the gateway is shutting down');
    const owner: SessionOwner = open.owner ?? { key: canonicalJson(identity), org: identity.orgId };
    // Checked before the work of opening, and again when adding (others may have come in between).
    const early = registry.admission(owner);
    release(early.released);
    refuseWhenFull(early.admitted, early.retryAfterMs);
    const id = open.sessionId ?? randomUUID();
    const mode = modeFor(identity);
    const probe: BackendSession = { ...identity, sessionId: id };
    const overview = await backend.catalogOverview(probe);
    const state = new SessionState(identity, id, mode, instructionsFor(mode, overview));
    await refresh(state);
    const added = registry.add(id, state, owner);
    release(added.released);
    if (!added.admitted) {
      await state.close();
      refuseWhenFull(false, added.retryAfterMs);
    }
    logger.debug({ sessionId: id, mode, workspace: identity.workspace, orgId: identity.orgId }, 'session opened');
    return state;
  }

  function instructionsFor(mode: ExposureMode, overview: CatalogOverview): string {
    const what = `Quiver is an MCP gateway in front of ${overview.toolCount} tools from ${overview.plugins.length} plugins.`;
    if (mode === 'search') return `${what} Call search_tools to find and enable the tools a task needs; call_tool runs a found tool if your client does not refresh its tool list.`;
    if (mode === 'capabilities') return `${what} Call list_capabilities to see the plugins, then load_capability to enable one.`;
    return `${what} Every tool you may use is listed.`;
  }

  async function listTools(state: SessionState): Promise<Tool[]> {
    if (state.mode === 'all') {
      const tools = await backend.listVisibleTools(state.backendSession);
      return tools.filter((tool) => tool.visibility !== 'silent').map(toMcpTool);
    }
    const bound = state.context
      .list()
      .filter((tool) => !state.suspended.has(tool.qualifiedName))
      .map(toMcpTool);
    const meta =
      state.mode === 'search'
        ? [searchToolsDefinition(searchToolsDescription(state.overview, maxLimit), defaultLimit, maxLimit), callToolDefinition('search')]
        : [listCapabilitiesDefinition(state.overview), loadCapabilityDefinition(), callToolDefinition('capabilities')];
    return [...meta, ...bound];
  }

  function sessionTokens(state: SessionState): number {
    return state.context
      .list()
      .filter((tool) => !state.suspended.has(tool.qualifiedName))
      .reduce((sum, tool) => sum + tool.tokens, 0);
  }

  function flushOutcome(state: SessionState): void {
    const event = state.openEvent;
    if (!event) return;
    state.openEvent = undefined;
    const toolsCalled = [...new Set(event.calls.map((call) => call.name))];
    const success = event.calls.length > 0 && event.calls.every((call) => call.success);
    backend
      .recordOutcome(event.eventId, { toolsCalled, success })
      .catch((error: unknown) => logger.warn({ err: error, eventId: event.eventId }, 'recording a selection outcome failed'));
  }

  async function notifyToolsChanged(send: SendNotification | undefined, state: SessionState): Promise<void> {
    try {
      if (send) await send({ method: 'notifications/tools/list_changed' });
      else await state.server.sendToolListChanged();
    } catch (error) {
      logger.debug({ err: error, sessionId: state.id }, 'tools/list_changed could not be sent');
    }
  }

  async function searchTools(state: SessionState, rawArguments: unknown, send: SendNotification): Promise<CallToolResult> {
    const parsed = searchArgumentsSchema.safeParse(rawArguments ?? {});
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${SEARCH_TOOLS}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
    const { query } = parsed.data;
    const limit = Math.min(parsed.data.limit ?? defaultLimit, maxLimit);
    flushOutcome(state);
    const boundBefore = new Set(state.context.list().map((tool) => tool.qualifiedName));
    // Always-include tools are already in context: ask for enough to still fill `limit` (§4.4).
    const found = await backend.searchTools(state.backendSession, query, { limit: limit + state.context.alwaysCount });
    const tools = found.tools
      .filter((tool) => tool.visibility !== 'silent' && !state.context.isAlwaysIncluded(tool.qualifiedName))
      .slice(0, limit);
    for (const warning of found.warnings) logger.debug({ sessionId: state.id, warning }, 'search degraded');

    // §7.5: a search clears the eviction list and re-discovery resets the loop counters.
    const readmitted = [...state.suspended];
    state.suspended.clear();
    for (const name of [...readmitted, ...tools.map((tool) => tool.qualifiedName)]) state.guard.reset(name);

    const verdict = state.history.record(query, tools.map((tool) => tool.qualifiedName));
    const bind = state.context.bind(tools);
    if (found.eventId) state.openEvent = { eventId: found.eventId, openedAt: now(), calls: [] };

    let marketplace: Awaited<ReturnType<GatewayBackend['suggestMarketplace']>> = [];
    if (tools.length < marketplaceThreshold) {
      try {
        marketplace = await backend.suggestMarketplace(state.backendSession, query, marketplaceLimit);
      } catch (error) {
        logger.warn({ err: error, sessionId: state.id }, 'marketplace suggestions failed');
      }
    }

    const describe = (tool: GatewayTool, full: boolean) => ({
      name: tool.qualifiedName,
      ...(tool.title ? { title: tool.title } : {}),
      description: tool.description,
      ...(full ? { inputSchema: tool.inputSchema } : {}),
      tokens: tool.tokens,
      plugin: tool.pluginName,
    });
    const payload: Record<string, unknown> = { query };
    if (verdict.redundant) {
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
    if (bind.evicted.length > 0) payload.evicted = bind.evicted;
    payload.session = { boundTools: state.boundTools().length, toolTokens: sessionTokens(state), capacity };
    if (bind.added.length > 0 || bind.evicted.length > 0 || readmitted.length > 0) await notifyToolsChanged(send, state);
    return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
  }

  async function listCapabilities(state: SessionState): Promise<CallToolResult> {
    const capabilities = (await backend.listCapabilities(state.backendSession)).filter((capability) => capability.visibility !== 'silent');
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

  async function loadCapability(state: SessionState, rawArguments: unknown, send: SendNotification): Promise<CallToolResult> {
    const parsed = loadCapabilityArgumentsSchema.safeParse(rawArguments ?? {});
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${LOAD_CAPABILITY}: name is required`);
    const tools = await backend.capabilityTools(state.backendSession, parsed.data.name);
    if (!tools) throw new McpError(ErrorCode.InvalidParams, `Unknown capability: ${parsed.data.name}. Call list_capabilities for the names.`);
    const visible = tools.filter((tool) => tool.visibility !== 'silent');
    const readmitted = visible.filter((tool) => state.suspended.delete(tool.qualifiedName));
    for (const tool of visible) state.guard.reset(tool.qualifiedName);
    const bind = state.context.bind(visible);
    const payload = {
      loaded: parsed.data.name,
      tools: visible.map((tool) => ({ name: tool.qualifiedName, description: tool.description, tokens: tool.tokens })),
      ...(bind.evicted.length > 0 ? { evicted: bind.evicted } : {}),
      session: { boundTools: state.boundTools().length, toolTokens: sessionTokens(state), capacity },
    };
    if (bind.added.length > 0 || bind.evicted.length > 0 || readmitted.length > 0) await notifyToolsChanged(send, state);
    return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload };
  }

  /** Resolves a tool the session may call right now, or throws InvalidParams. */
  async function resolveCallable(state: SessionState, name: string): Promise<GatewayTool> {
    if (state.mode === 'all') {
      const tool = await backend.getTool(state.backendSession, name);
      if (!tool || tool.visibility === 'silent') throw unknownToolError(name);
      return tool;
    }
    const how = state.mode === 'search' ? 'call search_tools to find it' : 'call load_capability for its plugin';
    if (state.suspended.has(name)) throw unknownToolError(name, `It was removed from your tool list after repeated identical calls; ${how} if you still need it`);
    const bound = state.context.get(name);
    if (bound) return bound;
    const exists = await backend.getTool(state.backendSession, name);
    if (exists && exists.visibility !== 'silent') throw unknownToolError(name, `It is not in this session's tool list; ${how} first`);
    throw unknownToolError(name);
  }

  async function proxyCall(
    state: SessionState,
    name: string,
    rawArguments: Record<string, unknown> | undefined,
    signal: AbortSignal,
    send: SendNotification,
  ): Promise<CallToolResult> {
    const tool = await resolveCallable(state, name);
    const args = rawArguments ?? {};
    const validation = validators.validate(tool, args);
    if (validation) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${validation}`);

    const started = performance.now();
    let result: CallToolResult;
    let errorCode: string | undefined;
    try {
      result = await backend.callTool(state.backendSession, name, args, { signal });
    } catch (error) {
      errorCode = (error as { code?: unknown }).code === undefined ? 'internal' : String((error as { code?: unknown }).code);
      recordCall(state, name, false, started, errorCode);
      result = toolCallFailure(name, error, logger); // throws for caller mistakes and bugs
    }
    const success = result.isError !== true;
    if (errorCode === undefined) recordCall(state, name, success, started);
    state.openEvent?.calls.push({ name, success });
    state.context.touch(name);

    // §7.1: the call has run; only now may the guard act.
    const verdict = state.guard.record(name, args);
    if (!verdict.loop) return result;
    if (state.mode !== 'all') {
      state.context.evict(name);
      state.suspended.add(name);
      await notifyToolsChanged(send, state);
    }
    logger.info({ sessionId: state.id, tool: name, reason: verdict.reason, count: verdict.count }, 'loop detected: tool evicted');
    const text = loopGuidance({ toolName: name, verdict, windowMs: guardOptions.windowMs, mode: state.mode, specific: specificGuidance[name] });
    return { ...result, content: [...(result.content ?? []), { type: 'text', text }] };
  }

  function recordCall(state: SessionState, name: string, success: boolean, started: number, errorCode?: string): void {
    const latencyMs = performance.now() - started;
    backend
      .recordCall(state.backendSession, { qualifiedName: name, success, latencyMs, ...(errorCode ? { errorCode } : {}) })
      .catch((error: unknown) => logger.warn({ err: error, tool: name }, 'recording a call failed'));
  }

  /** Runs the gateway's own work under the admission bounds; a refusal becomes a clear JSON-RPC error. */
  async function admitted<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await admission.run(work);
    } catch (error) {
      throw overloadedRequest(error);
    }
  }

  function installHandlers(state: SessionState): void {
    const { server } = state;
    const touch = () => registry.touch(state.id);

    server.setRequestHandler(ListToolsRequestSchema, async () => {
      touch();
      try {
        return { tools: await listTools(state) };
      } catch (error) {
        throw requestFailure('tools/list', error, logger);
      }
    });

    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      touch();
      const { name } = request.params;
      const send: SendNotification = (notification) => extra.sendNotification(notification);
      try {
        if (META_TOOL_NAMES.has(name) && isMetaToolOf(state.mode, name)) {
          if (name === SEARCH_TOOLS) return await admitted(() => searchTools(state, request.params.arguments, send));
          if (name === LIST_CAPABILITIES) return await admitted(() => listCapabilities(state));
          if (name === LOAD_CAPABILITY) return await admitted(() => loadCapability(state, request.params.arguments, send));
          const parsed = callToolArgumentsSchema.safeParse(request.params.arguments ?? {});
          if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${CALL_TOOL}: name (string) and arguments (object) expected`);
          if (META_TOOL_NAMES.has(parsed.data.name)) throw new McpError(ErrorCode.InvalidParams, `${CALL_TOOL} runs plugin tools, not ${parsed.data.name}; call it directly`);
          return await proxyCall(state, parsed.data.name, parsed.data.arguments, extra.signal, send);
        }
        return await proxyCall(state, name, request.params.arguments, extra.signal, send);
      } catch (error) {
        if (error instanceof McpError) throw error;
        return toolCallFailure(name, error, logger);
      }
    });

    server.setRequestHandler(ListResourcesRequestSchema, async () => {
      touch();
      try {
        const listed = await backend.listResources(state.backendSession);
        for (const warning of listed.warnings) logger.debug({ sessionId: state.id, warning }, 'resources degraded');
        return {
          resources: listed.items.map(({ pluginName, item }) => ({ ...item, uri: formatResourceUri(pluginName, item.uri) })),
        };
      } catch (error) {
        throw requestFailure('resources/list', error, logger);
      }
    });

    // Templates cannot be namespaced without breaking their URI-template syntax: none are offered.
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));

    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
      touch();
      const target = parseResourceUri(request.params.uri);
      if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${request.params.uri}`);
      try {
        const result = await backend.readResource(state.backendSession, target.pluginName, target.uri, { signal: extra.signal });
        return { ...result, contents: result.contents.map((content) => ({ ...content, uri: formatResourceUri(target.pluginName, content.uri) })) };
      } catch (error) {
        throw requestFailure(`resource ${request.params.uri}`, error, logger);
      }
    });

    server.setRequestHandler(ListPromptsRequestSchema, async () => {
      touch();
      try {
        const listed = await backend.listPrompts(state.backendSession);
        for (const warning of listed.warnings) logger.debug({ sessionId: state.id, warning }, 'prompts degraded');
        return { prompts: listed.items.map(({ pluginName, item }) => ({ ...item, name: formatPromptName(pluginName, item.name) })) };
      } catch (error) {
        throw requestFailure('prompts/list', error, logger);
      }
    });

    server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
      touch();
      const target = parsePromptName(request.params.name);
      if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
      try {
        return await backend.getPrompt(state.backendSession, target.pluginName, target.name, request.params.arguments ?? {}, { signal: extra.signal });
      } catch (error) {
        throw requestFailure(`prompt ${request.params.name}`, error, logger);
      }
    });
  }

  async function onCatalogChanged(change: CatalogChange): Promise<void> {
    const affected = registry.values().filter((state) => !change.workspaces || change.workspaces.includes(state.identity.workspace));
    await Promise.allSettled(
      affected.map(async (state) => {
        try {
          await refresh(state);
          await notifyToolsChanged(undefined, state);
        } catch (error) {
          logger.warn({ err: error, sessionId: state.id }, 'refreshing a session after a catalog change failed');
        }
      }),
    );
  }

  async function sweep(): Promise<number> {
    const expired = registry.sweep();
    for (const { id } of expired) logger.debug({ sessionId: id }, 'idle session expired');
    const at = now();
    for (const state of registry.values()) {
      if (state.openEvent && at - state.openEvent.openedAt > outcomeWindowMs) flushOutcome(state);
    }
    await Promise.allSettled(expired.map(({ value }) => value.close()));
    return expired.length;
  }

  return {
    openSession,
    getSession: (id) => registry.peek(id),
    touchSession: (id) => void registry.touch(id),
    get sessionCount() {
      return registry.size;
    },
    get saturated() {
      return admission.saturated;
    },
    sweep,
    async close() {
      closing = true;
      if (timer) clearInterval(timer);
      unsubscribe();
      await Promise.allSettled(registry.values().map((state) => state.close()));
    },
  };
}

/** True when `name` is a meta-tool the mode exposes (others fall through as unknown tools). */
function isMetaToolOf(mode: ExposureMode, name: string): boolean {
  if (mode === 'search') return name === SEARCH_TOOLS || name === CALL_TOOL;
  if (mode === 'capabilities') return name === LIST_CAPABILITIES || name === LOAD_CAPABILITY || name === CALL_TOOL;
  return false;
}

/** Compiled argument validators, cached by schema text (bounded). */
function createValidatorCache(logger: Logger): { validate(tool: GatewayTool, args: unknown): string | undefined } {
  const provider = new AjvJsonSchemaValidator();
  const cache = new Map<string, JsonSchemaValidator<unknown> | null>();
  return {
    validate(tool, args) {
      const key = JSON.stringify(tool.inputSchema);
      let validator = cache.get(key);
      if (validator === undefined) {
        try {
          validator = provider.getValidator(tool.inputSchema as never);
        } catch (error) {
          // A schema the validator cannot compile is the plugin's problem: let the plugin judge.
          logger.debug({ err: error, tool: tool.qualifiedName }, 'input schema does not compile; arguments not validated');
          validator = null;
        }
        if (cache.size >= 2000) cache.clear();
        cache.set(key, validator);
      }
      if (!validator) return undefined;
      const result = validator(args);
      return result.valid ? undefined : result.errorMessage;
    },
  };
}

