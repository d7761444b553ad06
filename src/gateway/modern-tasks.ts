/**
 * @module gateway/modern-tasks
 * Tasks for 2026-07-28 clients (issue #24): the `io.modelcontextprotocol/tasks` extension
 * (SEP-2663), bridged to the 2025-era tasks of plugins (`task-handlers.ts`,
 * `runtime/supervisor/tool-tasks.ts`). The server decides per request: a `tools/call` (directly
 * or through `call_tool`) of a tool whose plugin offers task execution (`execution.taskSupport`
 * `optional` or `required`), from a client that declared the extension in that request's
 * capabilities, creates the plugin's task and is answered `resultType: "task"` with the task
 * under an id of Quiver's own. A `required` tool called by a client without the extension is
 * `-32021` naming it. `tasks/get` returns the task with its result inlined once it completed
 * (resource URIs in the caller's addressing) or its error once it failed; `tasks/update`
 * acknowledges; `tasks/cancel` cancels at the plugin and acknowledges.
 *
 * Tasks belong to the principal's state (the identity a key or the stdio flags give), so
 * another principal's `tasks/get` of the id is `-32602` exactly as an id that never existed.
 * Retention is bounded: a task is forgotten `MODERN_TASK_LIMITS.retentionMs` after it was
 * created (or its plugin's shorter TTL), a principal holds at most `perPrincipal` tasks (the
 * oldest finished ones make room; when none has finished, a new task is refused), and the
 * tasks of a principal whose state the idle sweep closed are gone (per process, like MRTR
 * calls: route a task's requests by `Mcp-Name`, which the extension sets to the task id).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { requestCapabilities } from './client-requirements.ts';
import { isMetaToolOf } from './listed-tools.ts';
import { CALL_TOOL, META_TOOL_NAMES } from './meta-tools.ts';
import { prefixedToolName } from './native-names.ts';
import { showToolResultUris } from './result-uris.ts';
import { recordCall, type GatewayCore, type SessionState } from './session-state.ts';
import { startToolTask, type SessionTask } from './task-handlers.ts';

/** The extension's identifier (capabilities, `-32021` data). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Bounds of the tasks Quiver keeps for 2026-07-28 principals. */
export const MODERN_TASK_LIMITS = Object.freeze({ perPrincipal: 32, retentionMs: 60 * 60_000, pollIntervalMs: 1_000 });

/** The extension's task shape (2026-07-28). */
export interface ModernTask {
  taskId: string;
  status: Task['status'];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** A principal's task: the plugin's task, when Quiver forgets it, and its final state once known. */
interface PrincipalTask {
  owner: SessionTask;
  expiresAt: number;
  final?: ModernTask;
  recorded?: boolean;
}

const byState = new WeakMap<SessionState, Map<string, PrincipalTask>>();

function tasksOf(state: SessionState): Map<string, PrincipalTask> {
  let tasks = byState.get(state);
  if (!tasks) byState.set(state, (tasks = new Map()));
  return tasks;
}

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** A 2025 task (`ttl`, `pollInterval`) in the extension's shape under Quiver's id. */
function modernTask(task: Task, id: string): ModernTask {
  return {
    taskId: id,
    status: task.status,
    ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttl ?? null,
    pollIntervalMs: task.pollInterval ?? MODERN_TASK_LIMITS.pollIntervalMs,
  };
}

/** Whether the request declared the extension in its `_meta` capabilities. */
function declaresTasks(ctx: ServerContext): boolean {
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

const missingExtension = (what: string): MissingRequiredClientCapabilityError =>
  new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as never, `${what} needs the ${TASKS_EXTENSION} extension in the request's client capabilities`);

const unknownTask = (): ProtocolError => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');

/** Forgets expired tasks (cancelling unfinished ones at the plugin, best effort). */
function prune(state: SessionState, now: number): void {
  const tasks = tasksOf(state);
  for (const [id, entry] of tasks) {
    if (entry.expiresAt > now) continue;
    tasks.delete(id);
    if (!entry.final) entry.owner.task.cancel().catch(() => undefined);
  }
}

/** Room for one more task: the oldest finished tasks go first; none finished: refused. */
function makeRoom(state: SessionState): void {
  const tasks = tasksOf(state);
  for (const [id, entry] of tasks) {
    if (tasks.size < MODERN_TASK_LIMITS.perPrincipal) return;
    if (entry.final) tasks.delete(id);
  }
  if (tasks.size >= MODERN_TASK_LIMITS.perPrincipal) {
    throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `this principal has ${tasks.size} unfinished tasks, the most Quiver keeps; wait for one to finish or cancel one`);
  }
}

/** The plugin tool a `tools/call` runs (through `call_tool` or directly); undefined for a meta-tool. */
function targetOf(state: SessionState, params: { name: string; arguments?: Record<string, unknown> | undefined }): { name: string; arguments?: Record<string, unknown> } | undefined {
  if (params.name === CALL_TOOL && isMetaToolOf(state.mode, CALL_TOOL)) {
    const inner = params.arguments ?? {};
    if (typeof inner['name'] !== 'string' || META_TOOL_NAMES.has(inner['name'])) return undefined;
    const args = inner['arguments'];
    return { name: inner['name'], ...(args && typeof args === 'object' && !Array.isArray(args) ? { arguments: args as Record<string, unknown> } : {}) };
  }
  if (META_TOOL_NAMES.has(params.name)) return undefined;
  return { name: params.name, ...(params.arguments ? { arguments: params.arguments } : {}) };
}

/**
 * A `tools/call` of a 2026-07-28 client as a task, when the server decides so (see the module
 * comment); undefined: answer it as an ordinary call.
 */
export async function answerAsTask(core: GatewayCore, state: SessionState, ctx: ServerContext, params: { name: string; arguments?: Record<string, unknown> | undefined }): Promise<(ModernTask & { resultType: 'task' }) | undefined> {
  if (!core.backend.createToolTask) return undefined;
  const target = targetOf(state, params);
  if (!target) return undefined;
  const tool = await core.backend.getTool(state.backendSession, await prefixedToolName(core, state, target.name));
  const support = tool?.execution?.taskSupport;
  if (support !== 'optional' && support !== 'required') return undefined;
  if (!declaresTasks(ctx)) {
    if (support === 'required') throw missingExtension(`tool ${target.name} runs only as a task; it`);
    return undefined;
  }
  const now = core.now();
  prune(state, now);
  makeRoom(state);
  const { id, owner } = await startToolTask(core, state, target.name, target.arguments, { ttl: MODERN_TASK_LIMITS.retentionMs }, ctx.mcpReq.signal, async () => undefined, requestCapabilities(ctx), () => undefined);
  const ttl = owner.task.created.ttl;
  tasksOf(state).set(id, { owner, expiresAt: now + Math.min(MODERN_TASK_LIMITS.retentionMs, typeof ttl === 'number' && ttl > 0 ? ttl : Infinity) });
  return { resultType: 'task', ...modernTask(owner.task.created, id) };
}

/** The task as `tasks/get` shows it: the result inlined once completed, the error once failed. */
async function detailedTask(core: GatewayCore, state: SessionState, id: string, entry: PrincipalTask, signal: AbortSignal): Promise<ModernTask> {
  if (entry.final) return entry.final;
  const shown = modernTask(await entry.owner.task.get({ signal }), id);
  if (!TERMINAL.has(shown.status)) return shown;
  if (shown.status === 'completed') {
    const result = await showToolResultUris(core, state, entry.owner.pluginName, await entry.owner.task.result({ signal }));
    // The plugin's related-task key names its own id: left out.
    const { _meta: _pluginMeta, ...rest } = result;
    shown.result = rest as Record<string, unknown>;
    if (!entry.recorded) recordCall(core, state, entry.owner.toolName, result.isError !== true, entry.owner.started);
  } else if (shown.status === 'failed') {
    const error = await entry.owner.task.result({ signal }).then(
      () => ({ code: ProtocolErrorCode.InternalError, message: shown.statusMessage ?? 'the task failed' }),
      (failure: unknown) => ({ code: ProtocolErrorCode.InternalError, message: failure instanceof Error ? failure.message : String(failure) }),
    );
    shown.error = error;
    if (!entry.recorded) recordCall(core, state, entry.owner.toolName, false, entry.owner.started);
  }
  entry.recorded = true;
  entry.final = shown;
  return shown;
}

/** The principal's task `taskId`, or -32602 (also for another principal's id). */
function owned(core: GatewayCore, state: SessionState, ctx: ServerContext, taskId: string, what: string): PrincipalTask {
  if (!declaresTasks(ctx)) throw missingExtension(what);
  prune(state, core.now());
  const entry = tasksOf(state).get(taskId);
  if (!entry) throw unknownTask();
  return entry;
}

const TaskIdParams = z.looseObject({ taskId: z.string().min(1).max(200) });

/** Installs `tasks/get`, `tasks/update` and `tasks/cancel` on a 2026-07-28 request's server. */
export function installModernTaskHandlers(core: GatewayCore, state: SessionState, server: Server): void {
  if (!core.backend.createToolTask) return;
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async (params, ctx) => {
    const entry = owned(core, state, ctx, params.taskId, 'tasks/get');
    try {
      return (await detailedTask(core, state, params.taskId, entry, ctx.mcpReq.signal)) as never;
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, `Failed to retrieve task: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  // A bridged 2025 task asks nothing through inputRequests (its plugin's requests are refused), so
  // there is never an outstanding key: the responses are ignored, as the extension says.
  server.setRequestHandler('tasks/update', { params: TaskIdParams }, async (params, ctx) => {
    owned(core, state, ctx, params.taskId, 'tasks/update');
    return {} as never;
  });
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async (params, ctx) => {
    const entry = owned(core, state, ctx, params.taskId, 'tasks/cancel');
    if (!entry.final) await entry.owner.task.cancel({ signal: ctx.mcpReq.signal }).catch((error: unknown) => core.logger.debug({ err: error, taskId: params.taskId }, 'cancelling a task failed'));
    return {} as never;
  });
}
