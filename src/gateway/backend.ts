/**
 * @module gateway/backend
 * The one seam between the MCP gateway and the rest of Quiver. The gateway never imports
 * selection, runtime, plugins or catalog: it asks a `GatewayBackend` for exactly what an MCP
 * session needs (search, visible tools, calls, capabilities, resources, prompts, outcome
 * recording). The production backend is built over those services in the composition root;
 * `test/helpers/gateway-backend/local-backend.ts` (outside src/: never compiled into dist nor
 * packed) is a real in-repo backend over real MCP servers for tests and the gateway overhead bench.
 *
 * Contract every implementation keeps (seed 004 §9, DESIGN §3.4 "fail closed on security"):
 * - every method that takes a `BackendSession` returns only what that session may see
 *   (workspace/project enablement, organisation, user, roles, tier, expert allow-list);
 * - a tool or plugin the session may not see is indistinguishable from one that does not
 *   exist (`getTool` → undefined, `callTool` → `not_found`), so nothing leaks across orgs;
 * - failures are thrown as `QuiverError`: `invalid_input` / `not_found` for the caller's
 *   mistakes, `timeout` / `unavailable` / `circuit_open` / `rate_limited` / `upstream_error`
 *   for plugin trouble (operational), anything else is treated as a bug;
 * - what a plugin sends while a call runs (requests, log messages, progress) reaches only the
 *   session that made the call (`BackendCallOptions.client` / `onProgress`), never another;
 *   a request that session's client did not declare is refused at once (issue #12).
 */
import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  ElicitationCompleteNotification,
  GetPromptResult,
  LoggingLevel,
  LoggingMessageNotification,
  Progress,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Task,
  TaskStatusNotification,
  Tool,
  ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * How a session's tool list is built (DESIGN §3.8, seed 002 visibility tiers). `still` is the
 * search surface whose list never changes as a side effect (issue #24): `search_tools` returns
 * definitions and `call_tool` runs them; 2026-07-28 clients always get it instead of `search`.
 */
export type ExposureMode = 'search' | 'still' | 'capabilities' | 'all';

/** All exposure modes, for parsing flags and config. */
export const EXPOSURE_MODES: readonly ExposureMode[] = ['search', 'still', 'capabilities', 'all'];

/** Seed 002 visibility tiers: bound at start, discoverable, or never shown to the model. */
export type Visibility = 'always' | 'on-demand' | 'silent';

/** Who a gateway session acts for: taken from the API key (HTTP) or from flags (stdio). */
export interface SessionIdentity {
  /** Workspace id or name; `default` when the caller has no binding. */
  workspace: string;
  project: string | null;
  orgId: string | null;
  userId: string | null;
  roles: readonly string[];
  tier: string | null;
  /** Seed 004 §9.2: when present, search and listing are restricted to these qualified names. */
  expertAllowList?: readonly string[];
  /** Overrides the workspace's exposure mode for this connection. */
  exposureMode?: ExposureMode;
}

/** The identity plus the gateway's session id, as handed to every backend call. */
export interface BackendSession extends SessionIdentity {
  sessionId: string;
}

/** A tool as the gateway serves it: already namespaced `plugin__tool`. */
export interface GatewayTool {
  qualifiedName: string;
  pluginName: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations?: ToolAnnotations;
  /** Passed through exactly as the plugin declared them (issue #12). */
  icons?: Tool['icons'];
  execution?: Tool['execution'];
  _meta?: Tool['_meta'];
  /**
   * The client capabilities the plugin lists this tool for only (issue #24: a 2026-07-28 plugin
   * may vary its list by the request's declared capabilities); offered and run only for a caller
   * that declared them all (`client-requirements.ts`). Absent or empty: any caller.
   */
  requiresClientCapabilities?: readonly string[];
  visibility: Visibility;
  /** Pinned by an admin for this context: bound like `always` tools, never evicted. */
  pinned?: boolean;
  /** Tokens this tool's schema costs in the model's context (real tokenizer). */
  tokens: number;
  /** Retrieval score when the tool comes from a search. */
  score?: number;
}

/** What `searchTools` is asked. */
export interface ToolSearchOptions {
  /** Tools to return at most: filled from what the caller may be offered. */
  limit: number;
  /**
   * Issue #24: whether the caller may be offered a tool (the client capabilities it declared).
   * Tools it refuses are left out before ranking, so they neither take a place nor enter the
   * selection event.
   */
  offered?: ((tool: Pick<GatewayTool, 'requiresClientCapabilities'>) => boolean) | undefined;
}

/** What `searchTools` returns. */
export interface ToolSearchResult {
  /** Ranked, RBAC-filtered, best first. */
  tools: GatewayTool[];
  /** Selection event id: the gateway reports the outcome against it (seed 001 bandit loop). */
  eventId?: string;
  /** Degradations worth telling an operator (a stage ran without its embedder, …). */
  warnings: string[];
}

/** One plugin as `list_capabilities` shows it (seed 002 PluginManifest fields). */
export interface CapabilitySummary {
  name: string;
  title: string;
  summary: string;
  whenToUse: string[];
  whenNotToUse?: string[];
  tags: string[];
  category?: string;
  stability?: 'stable' | 'beta' | 'experimental';
  visibility: Visibility;
  toolCount: number;
}

/** An installable plugin from the marketplace (seed 004 §10). */
export interface MarketplaceSuggestion {
  name: string;
  title: string;
  summary: string;
  category?: string;
  /** Names of the tools it would add. */
  tools?: string[];
  /** How a user installs it (a CLI line or a URL). */
  install?: string;
}

/** What kinds of tools exist for a session: the material of the `search_tools` description. */
export interface CatalogOverview {
  toolCount: number;
  plugins: Array<{ name: string; title: string; category?: string; toolCount: number; summary?: string }>;
}

/** A resource or prompt list fanned out over plugins; failed plugins are named in warnings. */
export interface AggregatedList<T> {
  items: Array<{ pluginName: string; item: T }>;
  warnings: string[];
}

/** One tool call, as recorded for analytics and health. */
export interface CallRecord {
  qualifiedName: string;
  success: boolean;
  latencyMs: number;
  /** QuiverError code when the call failed in the gateway or backend. */
  errorCode?: string;
}

/** A catalog change: which workspaces it touches (undefined = possibly all). */
export interface CatalogChange {
  workspaces?: string[];
}

/** Client capabilities that decide what a plugin may ask through a session (MCP `ClientCapabilities` subset). */
export interface ClientLinkCapabilities {
  sampling?: { tools?: object; context?: object } | undefined;
  elicitation?: { form?: object; url?: object } | undefined;
  roots?: { listChanged?: boolean } | undefined;
}

/**
 * Issue #12 "Forwarding": the client of the session making a call. What the plugin sends back
 * while the call runs (sampling, elicitation and roots requests, log messages) goes through it,
 * on the call's own request stream; the backend refuses what `capabilities` does not declare.
 */
export interface ClientLink {
  sessionId: string;
  capabilities: ClientLinkCapabilities;
  /** The session's `logging/setLevel` (undefined: every message). */
  logLevel(): LoggingLevel | undefined;
  /** Sends a request to the client; resolves with its result, validated against the method's schema. */
  request(
    request: { method: 'sampling/createMessage' | 'elicitation/create' | 'roots/list'; params?: Record<string, unknown> | undefined; key?: string },
    options: { signal: AbortSignal },
  ): Promise<Record<string, unknown>>;
  /**
   * Sends a log message (the backend names the plugin in `logger`), or the completion of a URL
   * elicitation this client was sent (which may come after the call ended), to the client.
   */
  notify(
    notification:
      | { method: 'notifications/message'; params: LoggingMessageNotification['params'] }
      | { method: 'notifications/elicitation/complete'; params: ElicitationCompleteNotification['params'] },
  ): Promise<void>;
  /** Told when the backend refuses a plugin's request because `capabilities` lacks what it needs (issue #24: -32021). */
  refused?(capability: 'sampling' | 'elicitation' | 'roots'): void;
  /** True when requests pause the call until the client retries (2026-07-28, MRTR), which may take minutes. */
  pauses?: boolean;
}

/** Per-call options. */
export interface BackendCallOptions {
  signal?: AbortSignal;
  /** The calling session's client (tools/call, resources/read, prompts/get, completion/complete). */
  client?: ClientLink;
  /** Set when the client sent a progress token (tools/call, resources/read, prompts/get): receives the plugin's progress for this request. */
  onProgress?: (progress: Progress) => void;
}

/** Options of creating a tool task: besides the call's, where the plugin's status notifications for the task go. */
export interface BackendTaskOptions extends BackendCallOptions {
  /** Receives the plugin's `notifications/tasks/status` for this task (its own task id; the gateway maps it). */
  onStatus?: (status: TaskStatusNotification['params']) => void;
}

/** A `completion/complete` request in the plugin's own terms (its prompt name or template URI). */
export type CompletionRequest = CompleteRequest['params'];

/**
 * A task a plugin created for a session's `tools/call` (issue #12, MCP tasks): its later
 * requests reach the plugin connection that holds it.
 */
export interface BackendToolTask {
  /** The task as the plugin created it (the plugin's task id). */
  readonly created: Task;
  get(options?: BackendCallOptions): Promise<Task>;
  /** The tool's result, once the task has finished. */
  result(options?: BackendCallOptions): Promise<CallToolResult>;
  cancel(options?: BackendCallOptions): Promise<Task>;
}

/** One session's subscription to one plugin resource; `unsubscribe` is idempotent. */
export interface ResourceSubscriptionHandle {
  unsubscribe(): Promise<void>;
}

/**
 * Everything the gateway needs from Quiver's services. See the module comment for the
 * visibility and error contract.
 */
export interface GatewayBackend {
  /** Ranked tools for a natural-language query, RBAC-filtered before ranking (seed 004 §9.1). */
  searchTools(session: BackendSession, query: string, options: ToolSearchOptions): Promise<ToolSearchResult>;
  /**
   * Every non-silent tool the session may see. With `visibility`, only tools of those tiers,
   * plus pinned tools when `includePinned` (what a session binds at start: seed 002 `always`
   * tools and admin pins).
   */
  listVisibleTools(session: BackendSession, options?: { visibility?: Visibility[]; includePinned?: boolean }): Promise<GatewayTool[]>;
  /** One tool, or undefined when it does not exist or the session may not see it. */
  getTool(session: BackendSession, qualifiedName: string): Promise<GatewayTool | undefined>;
  /** Runs a tool upstream (timeouts, retries, breakers are the backend's). */
  callTool(session: BackendSession, qualifiedName: string, args: Record<string, unknown>, options?: BackendCallOptions): Promise<CallToolResult>;
  /** Closes a selection event with what the model then did (seed 001: toolsCalled, success). */
  recordOutcome(eventId: string, outcome: { toolsCalled: string[]; success: boolean; flaggedTools?: string[] }): Promise<void>;
  /** Records one proxied call (analytics, health). */
  recordCall(session: BackendSession, record: CallRecord): Promise<void>;
  /**
   * Plugins with their manifests, for `list_capabilities` (seed 002). Silent plugins excluded;
   * with `offered`, each counts only the tools the caller may be offered, and a plugin with none is left out.
   */
  listCapabilities(session: BackendSession, options?: Pick<ToolSearchOptions, 'offered'>): Promise<CapabilitySummary[]>;
  /** A plugin's visible tools for `load_capability`; undefined when the plugin is unknown to the session. */
  capabilityTools(session: BackendSession, pluginName: string): Promise<GatewayTool[] | undefined>;
  /** Resources of every visible plugin, with the plugin each came from. */
  listResources(session: BackendSession): Promise<AggregatedList<Resource>>;
  /** Reads a resource by its plugin and original URI. */
  readResource(session: BackendSession, pluginName: string, uri: string, options?: BackendCallOptions): Promise<ReadResourceResult>;
  /** Prompts of every visible plugin. */
  listPrompts(session: BackendSession): Promise<AggregatedList<Prompt>>;
  /** Renders a prompt by its plugin and original name. */
  getPrompt(
    session: BackendSession,
    pluginName: string,
    name: string,
    args: Record<string, string>,
    options?: BackendCallOptions,
  ): Promise<GetPromptResult>;
  /**
   * Issue #12, the optional surface: a backend that implements these gets them forwarded, and
   * the gateway declares them in `initialize` only then (`completions`, `resources.subscribe`).
   */
  /** Resource templates of every visible plugin, in the plugins' own URI templates. */
  listResourceTemplates?(session: BackendSession): Promise<AggregatedList<ResourceTemplate>>;
  /** Forwards `completion/complete` to a visible plugin (its `ref` already in the plugin's terms). */
  complete?(session: BackendSession, pluginName: string, request: CompletionRequest, options?: BackendCallOptions): Promise<CompleteResult>;
  /**
   * Subscribes a session to updates of one plugin resource; `onUpdated` gets the plugin's URI.
   * Implementations share one upstream subscription between sessions.
   */
  subscribeResource?(
    session: BackendSession,
    pluginName: string,
    uri: string,
    onUpdated: (uri: string) => void,
    options?: BackendCallOptions,
  ): Promise<ResourceSubscriptionHandle>;
  /** Calls a visible tool as a task of its plugin (the tool declares `execution.taskSupport`). */
  createToolTask?(
    session: BackendSession,
    qualifiedName: string,
    args: Record<string, unknown>,
    task: { ttl?: number },
    options?: BackendTaskOptions,
  ): Promise<BackendToolTask>;
  /** Installable plugins matching the query that the session's organisation does not have. */
  suggestMarketplace(session: BackendSession, query: string, limit: number): Promise<MarketplaceSuggestion[]>;
  /** What kinds of tools the session can find. */
  catalogOverview(session: BackendSession): Promise<CatalogOverview>;
  /** The session's client changed its roots: tell the plugin connections the session used (issue #12). */
  rootsChanged?(session: BackendSession): Promise<void>;
  /** Subscribes to catalog changes (installs, enablement, rules); returns the unsubscribe. */
  onCatalogChanged(listener: (change: CatalogChange) => void): () => void;
}
