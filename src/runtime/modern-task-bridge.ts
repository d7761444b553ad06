/**
 * @module runtime/modern-task-bridge
 * Tasks of a 2026-07-28 plugin (issue #24): the `io.modelcontextprotocol/tasks` extension
 * (SEP-2663), shown to the rest of the runtime as 2025-era plugin tasks, so the supervisor's
 * tool tasks (`supervisor/tool-tasks.ts`) and the gateway's bridges to both client eras work
 * unchanged. The v2 client refuses a `resultType: "task"` answer (UnsupportedResultType) and
 * keeps nothing of it, so these requests go below it: sent on its connected transport under
 * ids of their own, their responses taken off the transport before the client sees them.
 *
 * - `tools/call` with a 2025 `task` field: sent declaring the extension in this request's
 *   client capabilities (only these requests: the plugin decides per request, and an ordinary
 *   call must stay ordinary). A `task` answer becomes the 2025 `CreateTaskResult`; a plugin
 *   that answers at once anyway is given an already completed task held here.
 * - `tasks/get`: the extension's task in the 2025 shape (`ttlMs` → `ttl`, `pollIntervalMs` →
 *   `pollInterval`); a finished task's inlined result or error is kept for `tasks/result`.
 * - `tasks/result` (2025, blocking; the extension has none): polls `tasks/get` at the plugin's
 *   interval until the task ends; its result, or its error as an `McpError`.
 * - `tasks/cancel`: the extension's acknowledgement, then the task as `tasks/get` shows it.
 */
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY, type Client as ModernSdkClient } from '@modelcontextprotocol/client';
import { ErrorCode, McpError, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';

/** The extension's identifier. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Methods the bridge answers (a `tools/call` only with a 2025 `task` field). */
const BRIDGED = new Set(['tasks/get', 'tasks/result', 'tasks/cancel']);
const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
/** Bounds of polling for `tasks/result` (the plugin's `pollIntervalMs` within them). */
const POLL_MS = { min: 50, max: 5_000, fallback: 500 };
/** Finished tasks whose outcome a connection keeps (the oldest go first): the gateway keeps a task's final state itself. */
const MAX_KEPT = 256;

type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
interface RawTransport {
  send(message: Message): Promise<void>;
  onmessage?: ((message: Message, extra?: unknown) => void) | undefined;
}
interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
}
/** What the bridge knows of a finished task: its result or its error. */
type Outcome = { result: CallToolResult } | { error: { code: number; message: string; data?: unknown } } | { cancelled: true };

/** Whether a plugin's (2026) capabilities offer the extension. */
export function offersTasks(capabilities: { extensions?: Record<string, unknown> } | undefined): boolean {
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** The requests of one 2026-07-28 connection that the bridge answers. */
export class ModernTaskBridge {
  readonly #inner: ModernSdkClient;
  readonly #clientInfo: { name: string; version: string };
  readonly #capabilities: Record<string, unknown>;
  readonly #pending = new Map<string, Pending>();
  /** Tasks the plugin answered at once (their ids are the bridge's), and finished tasks' outcomes. */
  readonly #outcomes = new Map<string, { task: Task; outcome: Outcome }>();
  #hooked: RawTransport | undefined;
  #next = 0;

  constructor(inner: ModernSdkClient, clientInfo: { name: string; version: string }, capabilities: Record<string, unknown>) {
    this.#inner = inner;
    this.#clientInfo = clientInfo;
    this.#capabilities = capabilities;
  }

  /** Whether the bridge answers this request. */
  handles(request: { method: string; params?: Record<string, unknown> | undefined }): boolean {
    if (request.method === 'tools/call') return request.params?.['task'] !== undefined;
    return BRIDGED.has(request.method);
  }

  /** Answers a request `handles` accepted, in its 2025 shape. */
  async answer(request: { method: string; params?: Record<string, unknown> | undefined }, options: { signal?: AbortSignal | undefined; timeout?: number | undefined } = {}): Promise<unknown> {
    const params = request.params ?? {};
    if (request.method === 'tools/call') return { task: await this.#create(params, options) };
    const taskId = String(params['taskId'] ?? '');
    if (request.method === 'tasks/get') return this.#get(taskId, options);
    if (request.method === 'tasks/cancel') {
      if (!this.#outcomes.has(taskId)) await this.#raw('tasks/cancel', { taskId }, options);
      return this.#get(taskId, options);
    }
    return this.#result(taskId, options);
  }

  /** Rejects what is waiting (the connection closed). */
  close(): void {
    for (const pending of this.#pending.values()) pending.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    this.#pending.clear();
  }

  async #create(params: Record<string, unknown>, options: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<Task> {
    const { task: _task, ...call } = params;
    const answer = await this.#raw('tools/call', call, options);
    const { resultType, ...rest } = answer;
    if (resultType === 'task') return this.#remember(rest);
    if (resultType === 'complete' || resultType === undefined) {
      // The plugin decided to answer at once: the caller still gets a task, already completed.
      const now = new Date().toISOString();
      const task: Task = { taskId: `quiver-inline-${crypto.randomUUID()}`, status: 'completed', createdAt: now, lastUpdatedAt: now, ttl: null };
      this.#keep(task, { result: rest as CallToolResult });
      return task;
    }
    throw new McpError(ErrorCode.InternalError, `the plugin answered a task call with resultType '${String(resultType)}', which Quiver cannot run as a task`);
  }

  async #get(taskId: string, options: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<Task> {
    const known = this.#outcomes.get(taskId);
    if (known) return known.task;
    const { resultType: _resultType, ...raw } = await this.#raw('tasks/get', { taskId }, options);
    return this.#remember(raw);
  }

  async #result(taskId: string, options: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<CallToolResult> {
    for (;;) {
      const task = await this.#get(taskId, options);
      const known = this.#outcomes.get(taskId);
      if (known) {
        const { outcome } = known;
        if ('result' in outcome) return outcome.result;
        if ('error' in outcome) throw new McpError(outcome.error.code, outcome.error.message, outcome.error.data);
        throw new McpError(ErrorCode.InvalidRequest, `task ${taskId} was cancelled`);
      }
      const wait = Math.min(POLL_MS.max, Math.max(POLL_MS.min, task.pollInterval ?? POLL_MS.fallback));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, wait);
        options.signal?.addEventListener('abort', () => (clearTimeout(timer), reject(options.signal?.reason)), { once: true });
      });
    }
  }

  /** The extension's task in the 2025 shape; a finished one's outcome is kept. */
  #remember(raw: Record<string, unknown>): Task {
    const status = raw['status'] as Task['status'];
    const task: Task = {
      taskId: String(raw['taskId']),
      status,
      ...(typeof raw['statusMessage'] === 'string' ? { statusMessage: raw['statusMessage'] } : {}),
      createdAt: String(raw['createdAt']),
      lastUpdatedAt: String(raw['lastUpdatedAt'] ?? raw['createdAt']),
      ttl: typeof raw['ttlMs'] === 'number' ? raw['ttlMs'] : null,
      ...(typeof raw['pollIntervalMs'] === 'number' ? { pollInterval: raw['pollIntervalMs'] } : {}),
    };
    if (TERMINAL.has(status)) {
      const error = raw['error'] as { code?: unknown; message?: unknown; data?: unknown } | undefined;
      const outcome: Outcome =
        status === 'completed'
          ? { result: (raw['result'] ?? { content: [] }) as CallToolResult }
          : status === 'failed'
            ? { error: { code: typeof error?.code === 'number' ? error.code : ErrorCode.InternalError, message: typeof error?.message === 'string' ? error.message : (task.statusMessage ?? 'the task failed'), ...(error?.data !== undefined ? { data: error.data } : {}) } }
            : { cancelled: true };
      this.#keep(task, outcome);
    }
    return task;
  }

  /** Keeps a finished task's outcome, within `MAX_KEPT`. */
  #keep(task: Task, outcome: Outcome): void {
    this.#outcomes.delete(task.taskId);
    this.#outcomes.set(task.taskId, { task, outcome });
    for (const oldest of this.#outcomes.keys()) {
      if (this.#outcomes.size <= MAX_KEPT) break;
      this.#outcomes.delete(oldest);
    }
  }

  /** The transport with the bridge's responses taken off it (hooked once per transport). */
  #transport(): RawTransport {
    const transport = this.#inner.transport as unknown as RawTransport | undefined;
    if (!transport) throw new McpError(ErrorCode.ConnectionClosed, 'Not connected');
    if (this.#hooked !== transport) {
      const forward = transport.onmessage;
      transport.onmessage = (message, extra) => {
        const pending = typeof message.id === 'string' && message.method === undefined ? this.#pending.get(message.id) : undefined;
        if (!pending) return forward?.call(transport, message, extra);
        this.#pending.delete(message.id as string);
        if (message.error) pending.reject(new McpError(message.error.code, message.error.message, message.error.data));
        else pending.resolve(message.result ?? {});
      };
      this.#hooked = transport;
    }
    return transport;
  }

  /** One request of the extension, with this request's envelope declaring it; its raw result. */
  async #raw(method: string, params: Record<string, unknown>, options: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<Record<string, unknown>> {
    const transport = this.#transport();
    const version = this.#inner.getNegotiatedProtocolVersion();
    const extensions = { ...(this.#capabilities['extensions'] as Record<string, unknown> | undefined), [TASKS_EXTENSION]: {} };
    const _meta = { [PROTOCOL_VERSION_META_KEY]: version, [CLIENT_INFO_META_KEY]: this.#clientInfo, [CLIENT_CAPABILITIES_META_KEY]: { ...this.#capabilities, extensions } };
    const id = `quiver-task-${++this.#next}`;
    const timeoutMs = options.timeout ?? 60_000;
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', aborted);
        this.#pending.delete(id);
      };
      const aborted = (): void => {
        done();
        reject(options.signal?.reason ?? new McpError(ErrorCode.RequestTimeout, `${method} was cancelled`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new McpError(ErrorCode.RequestTimeout, `Request timed out: ${method} took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      if (options.signal?.aborted) return aborted();
      options.signal?.addEventListener('abort', aborted, { once: true });
      this.#pending.set(id, {
        resolve: (result) => (done(), resolve(result)),
        reject: (error) => (done(), reject(error)),
      });
      transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta } } as Message).catch((error: unknown) => (done(), reject(error)));
    });
  }
}
