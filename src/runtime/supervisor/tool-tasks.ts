/**
 * @module runtime/supervisor/tool-tasks
 * Task-based tool execution passed through to a plugin (issue #12; MCP 2025-11-25 tasks, the
 * SDK's experimental API): `tools/call` with `task` makes the plugin create a task, and the
 * task's later requests (`tasks/get`, `tasks/result`, `tasks/cancel`) must reach the same
 * connection, since a plugin keeps its tasks per connection. So a created task is returned as
 * a handle bound to that connection, which counts as busy (never stopped as idle) until the
 * task's result has been fetched, it was cancelled, or its TTL ran out.
 *
 * The plugin's `notifications/tasks/status` for a task go to the creator's `onStatus` while the
 * task is held (one sent before the creation was answered is not: the creator has that status).
 *
 * Creating a task is admitted like a call (crash loop, breakers, the plugin's and tool's rate
 * limits: `admission.ts`) but not retried, and its outcome does not move the breakers (the
 * task's own end is the plugin's to report); concurrency caps do not hold a task's lifetime.
 */
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  CancelTaskResultSchema,
  TaskStatusNotificationSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import type { UpstreamSpecInput } from '../types.ts';
import { admitCall } from './admission.ts';
import type { CallOptions, TaskStatusListener, ToolTaskOptions, ToolTasks, UpstreamToolTask } from './api.ts';
import { classifyFailure } from './classify.ts';
import type { InstanceLifecycle } from './lifecycle.ts';
import type { Requests } from './requests.ts';
import type { Instance } from './state.ts';

export type { TaskStatusListener, ToolTaskOptions, ToolTasks, UpstreamToolTask } from './api.ts';

/** What tool tasks need from the supervisor. */
export interface ToolTasksOptions {
  requests: Requests;
  lifecycle: Pick<InstanceLifecycle, 'scheduleIdle'>;
  defaultTimeoutMs: number;
}

/** Longest a connection is held for a task that never finishes and has no TTL. */
const MAX_HOLD_MS = 60 * 60 * 1000;
const TERMINAL = new Set<Task['status']>(['completed', 'failed', 'cancelled']);

/** Per connection, the listeners of its tasks' status notifications, by the plugin's task id. */
const statusRoutes = new WeakMap<Client, Map<string, TaskStatusListener>>();

/** Routes the status notifications of `taskId` on this connection to `listener`; returns the unroute. */
function routeTaskStatus(client: Client, taskId: string, listener: TaskStatusListener): () => void {
  let routes = statusRoutes.get(client);
  if (!routes) {
    const created = new Map<string, TaskStatusListener>();
    statusRoutes.set(client, (routes = created));
    client.setNotificationHandler(TaskStatusNotificationSchema, async (notification) => created.get(notification.params.taskId)?.(notification.params));
  }
  const held = routes;
  held.set(taskId, listener);
  return () => {
    if (held.get(taskId) === listener) held.delete(taskId);
  };
}

/** Creates `createToolTask`. */
export function createToolTasks(options: ToolTasksOptions): ToolTasks {
  const { requests, lifecycle, defaultTimeoutMs } = options;

  async function createToolTask(spec: UpstreamSpecInput, toolName: string, args: Record<string, unknown>, task: { ttl?: number }, callOptions: ToolTaskOptions = {}): Promise<UpstreamToolTask> {
    let instance: Instance | undefined;
    const created = await requests.simple(spec, 'tools/call (task)', callOptions, (entry) => async (connection, signal, remaining) => {
      if (!connection.client.getServerCapabilities()?.tasks?.requests?.tools?.call) {
        throw new QuiverError(ErrorCodes.invalidInput, `plugin '${entry.spec.pluginName}' does not run tools as tasks`);
      }
      const admission = await admitCall(entry, toolName);
      if (!admission.admitted) throw admission.error;
      let answer;
      try {
        answer = await connection.client.request({ method: 'tools/call', params: { name: toolName, arguments: args, task } }, CreateTaskResultSchema, { signal, timeout: remaining() });
      } finally {
        admission.permits.release('ignored', 'ignored');
      }
      instance = entry.instances.find((candidate) => candidate.connection === connection);
      if (instance) instance.holds += 1; // held until the task is done with (below)
      return answer.task;
    });
    const held = instance;
    const client = held?.connection?.client;
    const unroute = client && callOptions.onStatus ? routeTaskStatus(client, created.taskId, callOptions.onStatus) : () => undefined;
    let released = false;
    const release = (): void => {
      if (released || !held) return;
      released = true;
      unroute();
      clearTimeout(timer);
      held.holds -= 1;
      lifecycle.scheduleIdle(held);
    };
    const timer = setTimeout(release, Math.min(created.ttl ?? MAX_HOLD_MS, MAX_HOLD_MS));
    timer.unref();

    /** Runs one task request on the holding connection, mapped to a QuiverError like any request. */
    async function onHolder<T>(what: string, callOptions: CallOptions, run: (signal: AbortSignal, timeout: number) => Promise<T>): Promise<T> {
      const connection = held?.connection;
      if (!held || !connection?.isOpen()) {
        release();
        throw new QuiverError(ErrorCodes.notFound, `task ${created.taskId} is gone: plugin '${held?.entry.spec.pluginName ?? 'unknown'}' was restarted`, { details: { what: 'task', id: created.taskId } });
      }
      const timeout = callOptions.timeoutMs ?? defaultTimeoutMs;
      const signal = callOptions.signal ? AbortSignal.any([callOptions.signal, AbortSignal.timeout(timeout)]) : AbortSignal.timeout(timeout);
      try {
        return await run(signal, timeout);
      } catch (error) {
        throw classifyFailure({ spec: held.entry.spec, redact: held.entry.redact, what, signal, instance: held }, error);
      }
    }

    return {
      created,
      async get(getOptions = {}) {
        const task = await onHolder('tasks/get', getOptions, (signal, timeout) => connectionOf(held).client.request({ method: 'tasks/get', params: { taskId: created.taskId } }, GetTaskResultSchema, { signal, timeout }));
        return task;
      },
      async result(resultOptions = {}) {
        const result = await onHolder('tasks/result', resultOptions, (signal, timeout) =>
          connectionOf(held).client.request({ method: 'tasks/result', params: { taskId: created.taskId } }, CallToolResultSchema, { signal, timeout }),
        );
        release();
        return result;
      },
      async cancel(cancelOptions = {}) {
        const task = await onHolder('tasks/cancel', cancelOptions, (signal, timeout) => connectionOf(held).client.request({ method: 'tasks/cancel', params: { taskId: created.taskId } }, CancelTaskResultSchema, { signal, timeout }));
        if (TERMINAL.has(task.status)) release();
        return task;
      },
    };
  }

  return { createToolTask };
}

function connectionOf(instance: Instance | undefined) {
  return instance!.connection!;
}
