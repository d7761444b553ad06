/**
 * @module gateway/task-handlers
 * Task-based tool execution passed through (issue #12; MCP tasks, experimental in the SDK).
 * A `tools/call` with `task` for a tool whose plugin declares `execution.taskSupport`
 * (`optional` or `required`) creates the task at the plugin; the session gets a task id of
 * the gateway's own, mapped to the plugin's task, so `tasks/get`, `tasks/result`,
 * `tasks/list` and `tasks/cancel` of one session never reach another session's tasks (an id
 * the session does not own is unknown). `tasks/result` carries the tool result with its
 * resource URIs in the session's addressing, like a direct call.
 *
 * Tasks live in memory with the session (`tasksOf`), like subscriptions: a session rebuilt on
 * another replica does not have them. The plugin's `notifications/tasks/status` for a task
 * reach the session that created it, under the gateway's id (over HTTP on the session's own
 * stream: the call that created the task has been answered); clients may still poll.
 */
import { randomUUID } from 'node:crypto';
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CreateTaskResult,
  type Task,
  type TaskStatusNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { BackendToolTask } from './backend.ts';
import type { CallerCapabilities } from './client-requirements.ts';
import { requestFailure } from './errors.ts';
import { prefixedToolName } from './native-names.ts';
import { showToolResultUris } from './result-uris.ts';
import { recordCall, type GatewayCore, type SendNotification, type SessionState } from './session-state.ts';
import { resolveCallable } from './tool-proxy.ts';

/** A session's task: the plugin's task behind the gateway's id. */
export interface SessionTask {
  toolName: string;
  pluginName: string;
  task: BackendToolTask;
  started: number;
}

const bySession = new WeakMap<SessionState, Map<string, SessionTask>>();

/** The tasks a session owns, by the gateway's task id. */
export function tasksOf(state: SessionState): Map<string, SessionTask> {
  let tasks = bySession.get(state);
  if (!tasks) {
    tasks = new Map();
    bySession.set(state, tasks);
  }
  return tasks;
}

const shownTask = (task: Task, id: string): Task => ({ ...task, taskId: id });

/** Sends the plugin's status of a task to the session under the gateway's id (the plugin's `_meta` names its own ids: left out). */
function relayTaskStatus(core: GatewayCore, state: SessionState, id: string, status: TaskStatusNotification['params']): void {
  const { taskId: _pluginTaskId, _meta: _pluginMeta, ...task } = status;
  state.server.notification({ method: 'notifications/tasks/status', params: { ...task, taskId: id } }).catch((error: unknown) => {
    core.logger.debug({ err: error, sessionId: state.id, taskId: id }, 'relaying a task status failed');
  });
}

function owned(state: SessionState, id: string): SessionTask {
  const task = tasksOf(state).get(id);
  if (!task) throw new McpError(ErrorCode.InvalidParams, `Unknown task: ${id}`);
  return task;
}

/** `tools/call` with `task`: creates the plugin's task for a tool the session may call now. */
export async function createToolTask(
  core: GatewayCore,
  state: SessionState,
  requestedName: string,
  rawArguments: Record<string, unknown> | undefined,
  task: { ttl?: number },
  signal: AbortSignal,
  send: SendNotification,
  caller: CallerCapabilities,
): Promise<CreateTaskResult> {
  const { id, owner } = await startToolTask(core, state, requestedName, rawArguments, task, signal, send, caller, (taskId, status) => relayTaskStatus(core, state, taskId, status));
  tasksOf(state).set(id, owner);
  return { task: shownTask(owner.task.created, id) };
}

/**
 * Creates the plugin's task for a tool the session may call now, under a new gateway id; the
 * caller keeps it (2025 sessions in `tasksOf`, 2026-07-28 principals in `modern-tasks.ts`).
 */
export async function startToolTask(
  core: GatewayCore,
  state: SessionState,
  requestedName: string,
  rawArguments: Record<string, unknown> | undefined,
  task: { ttl?: number },
  signal: AbortSignal,
  send: SendNotification,
  caller: CallerCapabilities,
  onStatus: (id: string, status: TaskStatusNotification['params']) => void,
): Promise<{ id: string; owner: SessionTask }> {
  const { backend } = core;
  if (!backend.createToolTask) throw new McpError(ErrorCode.InvalidParams, 'This gateway does not run tools as tasks');
  const name = await prefixedToolName(core, state, requestedName);
  const tool = await resolveCallable(core, state, name, false, send, caller);
  const support = tool.execution?.taskSupport;
  if (support !== 'optional' && support !== 'required') throw new McpError(ErrorCode.InvalidParams, `Tool ${requestedName} does not support task-augmented calls; call it without task`);
  const args = rawArguments ?? {};
  const validation = await core.validators.validate(tool, args);
  if (validation) throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${requestedName}: ${validation}`);
  try {
    const id = randomUUID();
    const created = await backend.createToolTask(state.backendSession, name, args, task, { signal, onStatus: (status) => onStatus(id, status) });
    state.context.touch(name);
    return { id, owner: { toolName: name, pluginName: tool.pluginName, task: created, started: performance.now() } };
  } catch (error) {
    throw requestFailure(`task for tool ${requestedName}`, error, core.logger);
  }
}

/** Installs tasks/get, tasks/result, tasks/list and tasks/cancel and declares `tasks` when the backend runs them. */
export function installTaskHandlers(core: GatewayCore, state: SessionState): void {
  const { backend, logger } = core;
  if (!backend.createToolTask) return;
  state.server.registerCapabilities({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });

  state.server.setRequestHandler(GetTaskRequestSchema, async (request, extra) => {
    core.registry.touch(state.id);
    const { taskId } = request.params;
    try {
      return shownTask(await owned(state, taskId).task.get({ signal: extra.signal }), taskId);
    } catch (error) {
      throw requestFailure(`task ${taskId}`, error, logger);
    }
  });

  state.server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    core.registry.touch(state.id);
    const { taskId } = request.params;
    const owner = owned(state, taskId);
    try {
      const result = await showToolResultUris(core, state, owner.pluginName, await owner.task.result({ signal: extra.signal }));
      recordCall(core, state, owner.toolName, result.isError !== true, owner.started);
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
    } catch (error) {
      throw requestFailure(`task ${taskId}`, error, logger);
    }
  });

  state.server.setRequestHandler(ListTasksRequestSchema, async (_request, extra) => {
    core.registry.touch(state.id);
    const tasks = tasksOf(state);
    const entries = [...tasks];
    const settled = await Promise.allSettled(entries.map(([, owner]) => owner.task.get({ signal: extra.signal })));
    const listed: Task[] = [];
    settled.forEach((outcome, i) => {
      const [id] = entries[i]!;
      // A task the plugin no longer knows (expired, plugin restarted) leaves the list.
      if (outcome.status === 'fulfilled') listed.push(shownTask(outcome.value, id));
      else tasks.delete(id);
    });
    return { tasks: listed };
  });

  state.server.setRequestHandler(CancelTaskRequestSchema, async (request, extra) => {
    core.registry.touch(state.id);
    const { taskId } = request.params;
    try {
      return shownTask(await owned(state, taskId).task.cancel({ signal: extra.signal }), taskId);
    } catch (error) {
      throw requestFailure(`task ${taskId}`, error, logger);
    }
  });
}
