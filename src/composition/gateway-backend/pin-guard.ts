/**
 * @module composition/gateway-backend/pin-guard
 * Tool pinning at run time (issue #10): a plugin's process may serve other definitions than
 * were discovered (its files changed and it restarted). Before a call reaches a process that
 * has not been screened yet (a new set of process ids, or one that sent
 * `notifications/tools/list_changed` since), its tool list is read from the running
 * plugin and screened against the pins; a tool that now differs is quarantined and this very
 * call is refused, so nothing runs under an unapproved definition. Later calls are refused by
 * visibility (the quarantined tool leaves the selection snapshot).
 */
import type { Supervisor } from '../../runtime/index.ts';
import type { UpstreamSpecInput } from '../../runtime/types.ts';
import { quarantinedError, type PinningService } from '../../trust/pinning/index.ts';

/** The guard the call path runs before each plugin call. */
export interface PinGuard {
  /** Screens the plugin's running processes once per set of processes; throws `quarantined` for a tool that now differs. */
  beforeCall(spec: UpstreamSpecInput, toolName: string, qualifiedName: string): Promise<void>;
}

/** Creates the guard over the supervisor (tool lists, live processes) and the pinning service. */
export function createPinGuard(deps: { supervisor: Pick<Supervisor, 'listTools' | 'processes'>; pinning: Pick<PinningService, 'screenServed' | 'quarantineOf'> }): PinGuard {
  // pluginId → the process ids last screened (HTTP plugins have none: screened once).
  const screened = new Map<string, string>();
  const processKey = (pluginId: string): string =>
    deps.supervisor
      .processes()
      .filter((process) => process.pluginId === pluginId)
      .map((process) => `${process.pid ?? 'remote'}:${process.toolListChanges}`)
      .sort()
      .join(',');

  return {
    async beforeCall(spec, toolName, qualifiedName) {
      const key = processKey(spec.pluginId);
      if (key !== '' && screened.get(spec.pluginId) === key) return;
      // Lists through the pool: starts the process when none runs, so the call below reuses a screened one.
      const tools = await deps.supervisor.listTools(spec);
      const quarantined = await deps.pinning.screenServed({ pluginId: spec.pluginId, pluginName: spec.pluginName }, tools.map((tool) => ({
        name: tool.name,
        ...(tool.title === undefined ? {} : { title: tool.title }),
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.inputSchema as Record<string, unknown>,
        ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema as Record<string, unknown> }),
        ...(tool.annotations === undefined ? {} : { annotations: tool.annotations as Record<string, unknown> }),
      })));
      screened.set(spec.pluginId, processKey(spec.pluginId));
      if (!quarantined.includes(toolName)) return;
      const record = await deps.pinning.quarantineOf(spec.pluginName, toolName);
      throw quarantinedError(qualifiedName, record ?? { pluginName: spec.pluginName, toolName, quarantineReason: null });
    },
  };
}
