/**
 * @module runtime/supervisor/api
 * The supervisor's public shape: its options, the options of one call, and what `discover()`
 * and `health()` return. Declared apart from the parts that implement them so that callers
 * (plugins, composition, app) and the parts depend on declarations only; re-exported from
 * `runtime/supervisor.ts`. The contracts of the call path (the caller's link, tasks, resource
 * extras) are declared here too, so the folder's parts form a tree with this file at its root
 * (issue #28), not a cycle through the parts that implement them.
 */
import type { EgressDecision } from '../egress-proxy.ts';
import type { Progress, GetPromptResult, Implementation, Prompt, ReadResourceResult, Resource, ServerCapabilities, Tool, CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../core/logger.ts';
import type { BreakerState } from '../breaker.ts';
import type { LaunchDescription } from '../sandbox.ts';
import type { HostCapabilities } from '../host-detection.ts';
import type { SharedLimits } from '../replica-limits.ts';
import type { CallEvent, CircuitBreakerConfig, Clock, ResourceLimits, UpstreamSpecInput } from '../types.ts';
import type {
  CompleteRequest,
  CompleteResult,
  ElicitationCompleteNotification,
  LoggingLevel,
  LoggingMessageNotification,
  ResourceTemplate,
  Task,
  TaskStatusNotification,
} from '@modelcontextprotocol/sdk/types.js';

/** Sandbox and launcher settings. */
export interface SandboxOptions {
  /** Path of bwrap; `null` pretends bubblewrap is missing. Default: found on `searchPath`. */
  bubblewrapPath?: string | null;
  /** Run plugins that need a sandbox without one when bubblewrap is unusable (QUIVER_DANGEROUSLY_ALLOW_UNSANDBOXED). */
  dangerouslyAllowUnsandboxed?: boolean;
  /** Use cgroups for CPU/memory/pids limits when available (default true). */
  useCgroups?: boolean;
  /** Show a sandboxed plugin's install folder writable through an overlay kept in its state folder (default true). */
  codeOverlay?: boolean;
  /** Folder holding each plugin's writable state folder. Default: a fresh temp folder removed on close. */
  stateRoot?: string;
  /** Executable search path for commands, bwrap and setpriv. */
  searchPath?: string;
  /** The hub's own paths no plugin may see (its home, data folder, key file): masked in every sandbox that would contain them (issue #23). */
  hiddenPaths?: readonly string[];
  /** Limits overriding the isolation policy's defaults (per spec `limits` win). */
  defaultLimits?: ResourceLimits;
  /** Told of every egress decision of a plugin run with an allow-list (spec `egress`). */
  onEgressDecision?: (decision: PluginEgressDecision) => void;
}

/** An egress decision of one plugin's sandbox (port 0: a refused name lookup). */
export interface PluginEgressDecision extends EgressDecision {
  pluginId: string;
}

/** Options of `createSupervisor`. */
export interface SupervisorOptions {
  logger?: Logger;
  clock?: Clock;
  sandbox?: SandboxOptions;
  /** Connections (processes) per plugin version (default 1). */
  poolSize?: number;
  /** Upper bound for `poolSize` (default 8). */
  maxPoolSize?: number;
  /** Live plugin processes across all plugins (default 32); idle ones are evicted to make room. */
  maxProcesses?: number;
  /** Stop a connection unused this long (ms, default 300 000). */
  idleTimeoutMs?: number;
  /** Call timeout when neither the call nor the PID gives one (ms, default 30 000). */
  defaultTimeoutMs?: number;
  /** MCP handshake timeout (ms, default 15 000). */
  startTimeoutMs?: number;
  /** Grace given to a stopping plugin before SIGTERM, then SIGKILL (ms, default 1 000). */
  stopGraceMs?: number;
  /** Ping idle connections this often (ms); 0 disables (default 0). */
  pingIntervalMs?: number;
  /** Timeout of a liveness ping (ms, default 2 000). */
  pingTimeoutMs?: number;
  /** Restart backoff after a crash: initial delay doubling up to max (ms). */
  restartBackoff?: { initialMs?: number; maxMs?: number };
  /** `maxCrashes` within `windowMs` puts a plugin in 'crash-loop' for `cooldownMs` (or until `reset`). */
  crashLoop?: { maxCrashes?: number; windowMs?: number; cooldownMs?: number };
  /** Breaker settings when the PID has none. */
  breakerDefaults?: Partial<CircuitBreakerConfig>;
  /** Health window: last `size` calls within `ms`. */
  healthWindow?: { size?: number; ms?: number };
  /** OAuth access tokens of remote plugins by URL and owner (the spec's `authorizationOwner`; absent: the hub's), refreshed before expiry (issue #27, `plugins/oauth`). */
  remoteAuthorization?: ((url: string, owner: string | undefined) => Promise<string | undefined>) | undefined;
  /** The fetch of remote plugins' connections: the SSRF guard on their addresses (issue #27); absent: the platform's fetch. */
  remoteFetch?: typeof fetch | undefined;
  /** Receives one event per upstream tool call. */
  onCall?: (event: CallEvent) => void;
  /** Holds declared rate limits and concurrency caps across replicas (issue #16; `createSharedLimits`). */
  sharedLimits?: SharedLimits;
}

/** Options of one call. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The tool's MCP annotations when the caller knows them (else the supervisor asks the plugin). */
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean };
  /** The gateway session that made a tools/call: receives the plugin's requests and log messages (issue #12). */
  caller?: CallerLink;
  /** Receives the plugin's progress for this tools/call (the client's own token is the caller's business). */
  onProgress?: (progress: Progress) => void;
}

/** What `discover()` found. */
export interface Discovery {
  serverInfo: Implementation | undefined;
  capabilities: ServerCapabilities | undefined;
  instructions: string | undefined;
  tools: Tool[];
  /**
   * Per tool name, the client capabilities a 2026-07-28 plugin lists it for only
   * (`runtime/client-requirements.ts`, issue #24); absent: every tool is listed to every client.
   */
  clientRequirements?: Record<string, string[]>;
  resources: Resource[];
  prompts: Prompt[];
  launch: LaunchDescription | undefined;
  durationMs: number;
  /** Listings the server answered with an error (resources or prompts): installed without them. */
  warnings?: string[];
}

/**
 * The running connection that announced a changed tool list (issue #24). A tool a plugin adds at
 * runtime exists only in that process's memory, so the catalog reads the list from it, not
 * from a fresh process.
 */
export interface AnnouncedToolList {
  /** The plugin version that connection runs. */
  version: string;
  /** Lists what that connection serves now (tools/list, all pages; resources; prompts), as `discover()` reports it; fails once it has ended. */
  discover(): Promise<Discovery>;
}

/** What a plugin version is doing, as `health()` reports it. */
export type PluginState = 'idle' | 'starting' | 'running' | 'backoff' | 'crash-loop';

/** Health of one plugin version (`supervisor.health()`). */
export interface PluginHealth {
  pluginId: string;
  pluginName: string;
  version: string;
  state: PluginState;
  pid: number | undefined;
  pids: number[];
  processes: number;
  startedAt: Date | undefined;
  calls: number;
  failures: number;
  successRate: number;
  p50LatencyMs: number | undefined;
  p95LatencyMs: number | undefined;
  breaker: BreakerState;
  toolBreakers: Record<string, BreakerState>;
  recentCrashes: number;
  crashLoopUntil: Date | undefined;
  lastError: string | undefined;
  launch: LaunchDescription | undefined;
  score: number;
}

/** The supervisor (resource templates, completion and subscriptions: `resource-extras.ts`; tasks: `tool-tasks.ts`). */
export interface Supervisor extends ResourceExtras, ToolTasks {
  callTool(spec: UpstreamSpecInput, toolName: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult>;
  listTools(spec: UpstreamSpecInput, options?: CallOptions): Promise<Tool[]>;
  listResources(spec: UpstreamSpecInput, options?: CallOptions): Promise<Resource[]>;
  readResource(spec: UpstreamSpecInput, uri: string, options?: CallOptions): Promise<ReadResourceResult>;
  listPrompts(spec: UpstreamSpecInput, options?: CallOptions): Promise<Prompt[]>;
  getPrompt(spec: UpstreamSpecInput, name: string, args?: Record<string, string>, options?: CallOptions): Promise<GetPromptResult>;
  /**
   * Subscribes to running plugins announcing a changed tool list (`notifications/tools/list_changed`),
   * told the plugin id and the connection that announced it each time; returns the unsubscribe.
   */
  onToolListChanged(listener: (pluginId: string, announced: AnnouncedToolList) => void): () => void;
  /** One-shot discovery: start (sandboxed per trust), handshake, list everything, stop. */
  discover(spec: UpstreamSpecInput, options?: { timeoutMs?: number }): Promise<Discovery>;
  /** Stops every process of a plugin (all versions); calls start it again lazily. */
  stop(pluginId: string): Promise<void>;
  /** Stops the processes of one version of a plugin once idle (issue #11: the slot a rollout left); returns how many. */
  retireVersion(pluginId: string, version: string): number;
  /** Clears a plugin's crash-loop flag, crash history and breakers. */
  reset(pluginId: string): void;
  /** A gateway session's client changed its roots: tells the plugin connections that session used (issue #12). */
  rootsChanged(sessionId: string): Promise<void>;
  health(): PluginHealth[];
  /** Live plugin processes (pids of the launched leaders; tools/list_changed notifications each sent). */
  processes(): Array<{ pluginId: string; version: string; pid: number | undefined; toolListChanges: number }>;
  /** What the host offers for isolation (probes on first use). */
  host(): HostCapabilities;
  /** The hub's paths no sandbox shows (issue #26: a path error about one gets no grant hint). */
  hiddenPaths?(): readonly string[];
  /** The marker set as QUIVER_SUPERVISOR_ID in every process this supervisor starts. */
  readonly id: string;
  /** Kills every plugin process and stops all timers; later calls fail. */
  close(): Promise<void>;
}

/** A server→client request Quiver forwards: its method and params, as the plugin sent them. */
export interface ForwardedRequest {
  method: 'sampling/createMessage' | 'elicitation/create' | 'roots/list';
  params?: Record<string, unknown> | undefined;
  /** The key a 2026-07-28 plugin gave this input request in its `inputRequests` (absent for a 2025 push). */
  key?: string;
}

/** The client capabilities that decide what may be forwarded to a caller (MCP `ClientCapabilities` subset). */
export interface CallerCapabilities {
  sampling?: { tools?: object; context?: object } | undefined;
  elicitation?: { form?: object; url?: object } | undefined;
  roots?: { listChanged?: boolean } | undefined;
}

/**
 * The gateway session that made a call, as the runtime sees it: where the plugin's requests
 * and messages for this call go. Implemented by the gateway per request.
 */
export interface CallerLink {
  /** The gateway session id: calls of one session may share a connection. */
  sessionId: string;
  capabilities: CallerCapabilities;
  /** The level the session asked for with `logging/setLevel` (undefined: every message). */
  logLevel(): LoggingLevel | undefined;
  /** Sends a request to the client on the call's own request stream; resolves with its validated result. */
  request(request: ForwardedRequest, options: { signal: AbortSignal }): Promise<Record<string, unknown>>;
  /**
   * Sends a notification to the client, related to the call (an `elicitation/complete` may come
   * after the call ended: then on the session's own stream).
   */
  notify(notification: ForwardedNotification): Promise<void>;
  /**
   * Told when a request of the plugin is refused because the caller did not declare the
   * capability it needs (issue #24: a 2026-07-28 client whose call then fails gets -32021).
   */
  refused?(capability: 'sampling' | 'elicitation' | 'roots'): void;
  /**
   * True when the caller answers the plugin's requests by pausing the call until its client
   * retries (a 2026-07-28 client, MRTR): the pool may then start another process for others.
   */
  pauses?: boolean;
}

/** A plugin notification Quiver passes on to the session it belongs to. */
export type ForwardedNotification =
  | { method: 'notifications/message'; params: LoggingMessageNotification['params'] }
  | { method: 'notifications/elicitation/complete'; params: ElicitationCompleteNotification['params'] };

/** A task a plugin created, bound to the connection that holds it. */
export interface UpstreamToolTask {
  /** The task as the plugin created it. */
  readonly created: Task;
  get(options?: CallOptions): Promise<Task>;
  /** The tool's result; waits for the task to finish (bounded by the options' or default timeout). */
  result(options?: CallOptions): Promise<CallToolResult>;
  cancel(options?: CallOptions): Promise<Task>;
}

/** Receives the plugin's status notifications for one task (under the plugin's task id). */
export type TaskStatusListener = (status: TaskStatusNotification['params']) => void;

/** Options of creating a task: the call's, and who hears the task's status changes. */
export interface ToolTaskOptions extends CallOptions {
  onStatus?: TaskStatusListener;
}

/** What the supervisor offers for tasks. */
export interface ToolTasks {
  /** Calls `toolName` as a task (the plugin must declare `tasks.requests.tools.call`). */
  createToolTask(spec: UpstreamSpecInput, toolName: string, args: Record<string, unknown>, task: { ttl?: number }, options?: ToolTaskOptions): Promise<UpstreamToolTask>;
}

/** Called with the plugin's own URI when the plugin says the resource changed. */
export type ResourceUpdateListener = (uri: string) => void;

/** One listener's subscription; `unsubscribe` is idempotent. */
export interface ResourceSubscription {
  unsubscribe(): Promise<void>;
}

/** What the supervisor offers beyond list/read/get. */
export interface ResourceExtras {
  /** Every resource template (empty when the plugin has no resources capability). */
  listResourceTemplates(spec: UpstreamSpecInput, options?: CallOptions): Promise<ResourceTemplate[]>;
  /** Forwards `completion/complete`; a plugin without the completions capability completes nothing. */
  complete(spec: UpstreamSpecInput, params: CompleteRequest['params'], options?: CallOptions): Promise<CompleteResult>;
  /** Subscribes `listener` to updates of `uri` (upstream once per plugin version and URI). */
  subscribeResource(spec: UpstreamSpecInput, uri: string, listener: ResourceUpdateListener, options?: CallOptions): Promise<ResourceSubscription>;
  /** Upstream subscriptions held right now, as `pluginId@version uri` with their listener count. */
  resourceSubscriptions(): Array<{ entry: string; uri: string; listeners: number }>;
}
