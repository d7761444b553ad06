/**
 * @module runtime/modern-client
 * Quiver's client of a plugin that speaks the 2026-07-28 revision (issue #24). The wire is the
 * v2 SDK's `Client` (`@modelcontextprotocol/client`): the per-request `_meta` envelope, the
 * HTTP `Mcp-Method` / `Mcp-Name` headers, lifted results, and Multi Round-Trip Requests, which
 * it fulfils through the handlers registered for `elicitation/create`,
 * `sampling/createMessage` and `roots/list` and retries with `inputResponses` and the echoed
 * `requestState`. The rest of the runtime keeps one client type: this class is a 1.x `Client`
 * whose methods the runtime uses are answered by the v2 client, so session routing forwards a
 * plugin's input requests to the calling session exactly as it forwards a 2025 plugin's pushed
 * requests (that is the 2026 → 2025 shim). Errors come back as 1.x `McpError`s, so failures
 * are classified as for any plugin. What the 2026 revision removed is answered locally:
 * `ping` is a `server/discover`, `logging/setLevel` becomes the per-request log level,
 * `roots/list_changed` has nothing to say (roots are asked for per request).
 */
import { Client as ModernSdkClient, LOG_LEVEL_META_KEY, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions, RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AnyObjectSchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { ErrorCode, McpError, type ClientNotification, type ClientRequest, type ClientResult, type LoggingLevel, type Notification, type Request, type Result } from '@modelcontextprotocol/sdk/types.js';
import { withoutMcpErrorPrefix } from '../core/mcp-error-text.ts';
import type { DiscoverResult } from './era-probe.ts';
import { ModernTaskBridge, offersTasks } from './modern-task-bridge.ts';
import { pollToolList, type ListedTools } from './tool-list-poll.ts';

/** What a modern connection is opened with: a probe's `DiscoverResult`, or a pinned version to discover in place. */
export type ModernStart = { discover: DiscoverResult } | { pin: string };

/** The 1.x error for what the v2 client threw (the runtime classifies `McpError` codes). */
export function toMcpError(error: unknown): unknown {
  if (error instanceof McpError) return error;
  if (error instanceof ProtocolError) return new McpError(error.code, withoutMcpErrorPrefix(error.message), error.data);
  if (error instanceof SdkError) {
    const code =
      error.code === SdkErrorCode.RequestTimeout ? ErrorCode.RequestTimeout : error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected ? ErrorCode.ConnectionClosed : ErrorCode.InternalError;
    return new McpError(code, error.message, error.data);
  }
  return error;
}

async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toMcpError(error);
  }
}

/** The method literal of a 1.x request or notification schema (`z.object({ method: z.literal(…) })`). */
function methodOf(schema: unknown): string {
  const shape = (schema as { shape?: { method?: { value?: unknown; def?: { values?: unknown[] } } } }).shape;
  const method = shape?.method?.value ?? shape?.method?.def?.values?.[0];
  if (typeof method !== 'string') throw new Error('a handler schema without a method literal');
  return method;
}

type Extra = RequestHandlerExtra<ClientRequest | Request, ClientNotification | Notification>;
type Params<K extends keyof Client> = Client[K] extends (...args: infer A) => unknown ? A : never;
type Answer<K extends keyof Client> = Client[K] extends (...args: never[]) => infer R ? R : never;

/**
 * A 1.x `Client` answered by a connected v2 client in the 2026-07-28 era. Only the methods the
 * runtime uses are answered; the 1.x protocol underneath is never connected, so any other
 * method fails with "Not connected" rather than reaching the plugin in the wrong era.
 */
export class ModernUpstreamClient extends Client {
  readonly #inner: ModernSdkClient;
  #logLevel: LoggingLevel | undefined;
  /** The handler of tool-list changes (the runtime's), called by the poller of a list without a stream. */
  #toolListChanged: ((notification: { method: string }) => void | Promise<void>) | undefined;
  #stopPolling: (() => void) | undefined;
  /** The plugin's tasks (the Tasks extension) as 2025-era tasks (modern-task-bridge.ts). */
  readonly #tasks: ModernTaskBridge;

  constructor(inner: ModernSdkClient, clientInfo: { name: string; version: string }, capabilities: Client['registerCapabilities'] extends (capabilities: infer C) => void ? C : never) {
    super(clientInfo, { capabilities });
    this.#inner = inner;
    this.#tasks = new ModernTaskBridge(inner, clientInfo, capabilities as Record<string, unknown>);
    inner.onclose = () => {
      this.#stopPolling?.();
      this.#tasks.close();
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
  }

  /** The negotiated revision (always a modern one). */
  get protocolVersion(): string | undefined {
    return this.#inner.getNegotiatedProtocolVersion();
  }

  /** `_meta` with the log level a caller asked for (2026-07-28 carries it per request). */
  #withLogLevel<P extends { _meta?: Record<string, unknown> | undefined } | undefined>(params: P): P {
    if (this.#logLevel === undefined || params === undefined) return params;
    return { ...params, _meta: { ...params._meta, [LOG_LEVEL_META_KEY]: this.#logLevel } };
  }

  override get transport(): Transport | undefined {
    return this.#inner.transport as unknown as Transport | undefined;
  }

  /**
   * Issue #24: a 2026-07-28 plugin announces a changed tool list only on a `subscriptions/listen`
   * stream (no unsolicited notifications in that revision). When it declares `tools.listChanged`,
   * one stream per connection is opened for tool-list changes; what arrives on it reaches the
   * handlers registered with `setNotificationHandler`, as a 2025 plugin's notification does, so
   * the catalog follows both eras through the same path. The stream ends with the connection.
   */
  followToolList(onError: (error: unknown) => void): void {
    if (this.#inner.getServerCapabilities()?.tools?.listChanged) {
      this.#inner.listen({ toolsListChanged: true }).catch(onError);
      return;
    }
    // No stream: its list is read again when its ttlMs says it went stale (tool-list-poll.ts).
    this.#stopPolling = pollToolList(
      () => this.#inner.listTools(undefined, { cacheMode: 'refresh' }) as Promise<ListedTools>,
      () => void this.#toolListChanged?.({ method: 'notifications/tools/list_changed' }),
    );
  }

  /** The plugin's capabilities; one offering the Tasks extension is shown as a 2025 plugin running tool calls as tasks. */
  override getServerCapabilities(): Answer<'getServerCapabilities'> {
    const capabilities = this.#inner.getServerCapabilities();
    if (!offersTasks(capabilities as { extensions?: Record<string, unknown> } | undefined)) return capabilities as Answer<'getServerCapabilities'>;
    return { ...capabilities, tasks: { requests: { tools: { call: {} } }, cancel: {} } } as Answer<'getServerCapabilities'>;
  }

  override getServerVersion(): Answer<'getServerVersion'> {
    return this.#inner.getServerVersion() as Answer<'getServerVersion'>;
  }

  override getInstructions(): string | undefined {
    return this.#inner.getInstructions();
  }

  override async close(): Promise<void> {
    this.#stopPolling?.();
    await this.#inner.close();
  }

  override listTools(...[params, options]: Params<'listTools'>): Answer<'listTools'> {
    // Always fetched: the plugin's list is what discovery and pinning must see.
    return translated(async () => {
      const listed = await this.#inner.listTools(params, { ...options, cacheMode: 'refresh' });
      // The extension has no per-tool declaration (2026 lists carry no `execution`): the plugin
      // decides per call, so each of its tools may run as a task (2025's `optional`).
      if (!offersTasks(this.#inner.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined)) return listed;
      return { ...listed, tools: listed.tools.map((tool) => ({ ...tool, execution: { ...(tool as { execution?: object }).execution, taskSupport: 'optional' } })) };
    }) as Answer<'listTools'>;
  }

  override listResources(...[params, options]: Params<'listResources'>): Answer<'listResources'> {
    return translated(() => this.#inner.listResources(params, { ...options, cacheMode: 'refresh' })) as Answer<'listResources'>;
  }

  override listResourceTemplates(...[params, options]: Params<'listResourceTemplates'>): Answer<'listResourceTemplates'> {
    return translated(() => this.#inner.listResourceTemplates(params, { ...options, cacheMode: 'refresh' })) as Answer<'listResourceTemplates'>;
  }

  override listPrompts(...[params, options]: Params<'listPrompts'>): Answer<'listPrompts'> {
    return translated(() => this.#inner.listPrompts(params, { ...options, cacheMode: 'refresh' })) as Answer<'listPrompts'>;
  }

  override readResource(...[params, options]: Params<'readResource'>): Answer<'readResource'> {
    return translated(() => this.#inner.readResource(this.#withLogLevel(params), { ...options, cacheMode: 'bypass' })) as Answer<'readResource'>;
  }

  override getPrompt(...[params, options]: Params<'getPrompt'>): Answer<'getPrompt'> {
    return translated(() => this.#inner.getPrompt(this.#withLogLevel(params), options)) as Answer<'getPrompt'>;
  }

  override complete(...[params, options]: Params<'complete'>): Answer<'complete'> {
    return translated(() => this.#inner.complete(params, options)) as Answer<'complete'>;
  }

  /** A tool call; `input_required` rounds run inside it through the registered handlers. */
  override callTool(...[params, , options]: Params<'callTool'>): Answer<'callTool'> {
    return translated(() => this.#inner.callTool(this.#withLogLevel(params), options)) as Answer<'callTool'>;
  }

  override subscribeResource(...[params, options]: Params<'subscribeResource'>): Answer<'subscribeResource'> {
    return translated(() => this.#inner.subscribeResource(params, options)) as Answer<'subscribeResource'>;
  }

  override unsubscribeResource(...[params, options]: Params<'unsubscribeResource'>): Answer<'unsubscribeResource'> {
    return translated(() => this.#inner.unsubscribeResource(params, options)) as Answer<'unsubscribeResource'>;
  }

  /** 2026-07-28 has no `logging/setLevel`: the level goes with each later request instead. */
  override async setLoggingLevel(level: LoggingLevel): Promise<Awaited<Answer<'setLoggingLevel'>>> {
    this.#logLevel = level;
    return {};
  }

  /** 2026-07-28 has no `ping`: a `server/discover` shows the plugin answers. */
  override async ping(options?: RequestOptions): Promise<Awaited<Answer<'ping'>>> {
    await translated(() => this.#inner.request({ method: 'server/discover', params: {} }, options));
    return {};
  }

  /** Roots are asked for per request in 2026-07-28 (`input_required`): there is no change to announce. */
  override async sendRootsListChanged(): Promise<void> {}

  override request<T extends AnyObjectSchema>(request: ClientRequest | Request, resultSchema: T, options?: RequestOptions): Promise<SchemaOutput<T>> {
    // 2025-era task requests (the supervisor's tool tasks) run on the plugin's Tasks extension.
    const bridged = { method: request.method, params: request.params as Record<string, unknown> | undefined };
    if (this.#tasks.handles(bridged)) return translated(() => this.#tasks.answer(bridged, { signal: options?.signal, timeout: options?.timeout })) as Promise<SchemaOutput<T>>;
    return translated(() => this.#inner.request(request as never, resultSchema as never, options)) as Promise<SchemaOutput<T>>;
  }

  override setRequestHandler<T extends AnyObjectSchema>(
    requestSchema: T,
    handler: (request: SchemaOutput<T>, extra: Extra) => ClientResult | Result | Promise<ClientResult | Result>,
  ): void {
    // The 1.x constructor registers its defaults before this class's fields exist: those stay 1.x.
    if (!(#inner in this)) return super.setRequestHandler(requestSchema, handler);
    const method = methodOf(requestSchema);
    this.#inner.setRequestHandler(method as 'elicitation/create', async (request, context) => {
      const extra = {
        signal: context.mcpReq.signal,
        requestId: context.mcpReq.id,
        // The plugin's own key of this input request (the driver dispatches each under it): kept
        // when Quiver relays it to a 2026-07-28 client (issue #24).
        inputKey: String(context.mcpReq.id),
        sendNotification: async () => undefined,
        sendRequest: async () => {
          throw new McpError(ErrorCode.InvalidRequest, 'a 2026-07-28 plugin cannot be sent requests from an input request');
        },
      } as unknown as Extra;
      return (await handler(request as SchemaOutput<T>, extra)) as never;
    });
  }

  override setNotificationHandler<T extends AnyObjectSchema>(notificationSchema: T, handler: (notification: SchemaOutput<T>) => void | Promise<void>): void {
    if (!(#inner in this)) return super.setNotificationHandler(notificationSchema, handler);
    const method = methodOf(notificationSchema);
    if (method === 'notifications/tools/list_changed') this.#toolListChanged = (notification) => handler(notification as SchemaOutput<T>);
    this.#inner.setNotificationHandler(method as 'notifications/message', (notification) => handler(notification as SchemaOutput<T>));
  }
}

/** A v2 client as Quiver is to a modern plugin: the same name and capabilities, input requests fulfilled by its handlers. */
export function newModernSdkClient(clientInfo: { name: string; version: string }, capabilities: object, start: ModernStart | 'auto'): ModernSdkClient {
  return new ModernSdkClient(clientInfo, {
    capabilities,
    inputRequired: { autoFulfill: true, maxRounds: 10 },
    ...(start === 'auto' ? { versionNegotiation: { mode: 'auto' } } : 'pin' in start ? { versionNegotiation: { mode: { pin: start.pin } } } : {}),
  });
}
