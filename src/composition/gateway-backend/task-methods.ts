/**
 * @module composition/gateway-backend/task-methods
 * Task-based tool execution for the gateway (issue #12): a tool the session may call right
 * now is run as a task of its plugin (`runtime/supervisor/tool-tasks.ts`), after the same
 * visibility and pin checks as a call. The gateway keeps which session owns which task.
 */
import { ErrorCodes, QuiverError, notFound } from '../../core/errors.ts';
import type { BackendCallOptions, GatewayBackend } from '../../gateway/backend.ts';
import type { Supervisor } from '../../runtime/index.ts';
import type { BackendCaches } from './caches.ts';
import type { PinGuard } from './pin-guard.ts';
import type { SessionVisibility } from './visibility.ts';
import type { OwnedSpec } from './remote-owner.ts';

/** What the task methods are built from. */
export interface TaskMethodsDeps {
  supervisor: Pick<Supervisor, 'createToolTask'>;
  visibility: SessionVisibility;
  caches: Pick<BackendCaches, 'specFor'>;
  pinGuard?: PinGuard | undefined;
  /** Issue #27: the session's owner's authorization for a remote plugin authorized per user or organisation. */
  owned?: OwnedSpec | undefined;
}

const signalOf = (options: BackendCallOptions = {}) => (options.signal ? { signal: options.signal } : {});

/** Creates `createToolTask`. */
export function createTaskMethods(deps: TaskMethodsDeps): Required<Pick<GatewayBackend, 'createToolTask'>> {
  const { supervisor, visibility, caches } = deps;
  return {
    async createToolTask(session, qualifiedName, args, task, options) {
      const tool = (await visibility.index(session)).byName.get(qualifiedName);
      if (!tool) throw notFound('tool', qualifiedName);
      if (!tool.pluginName) throw new QuiverError(ErrorCodes.unavailable, `tool '${qualifiedName}' has no plugin process to run it`);
      const stable = await caches.specFor(tool.pluginName);
      // Issue #27: the caller's own authorization for a per-user remote plugin, screening included.
      const spec = deps.owned ? await deps.owned(stable, session) : stable;
      await deps.pinGuard?.beforeCall(spec, tool.name, qualifiedName);
      // Issue #12: the plugin's status notifications for the task go to the session that created it.
      const upstream = await supervisor.createToolTask(spec, tool.name, args, task, { ...signalOf(options), ...(options?.onStatus ? { onStatus: options.onStatus } : {}) });
      return {
        created: upstream.created,
        get: (callOptions) => upstream.get(signalOf(callOptions)),
        result: (callOptions) => upstream.result(signalOf(callOptions)),
        cancel: (callOptions) => upstream.cancel(signalOf(callOptions)),
      };
    },
  };
}
