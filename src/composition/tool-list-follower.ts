/**
 * @module composition/tool-list-follower
 * The catalog follows a running plugin's own tool list (issue #24): when a plugin process sends
 * `notifications/tools/list_changed`, its tools are re-synced through the same path as
 * `quiver plugin sync` (pinning screen, differential catalog sync, selection caches dropped),
 * so a new tool enters the catalog under the pinning rules (pending approval unless it was
 * approved before), a removed one is retired and a changed one is quarantined. The list synced
 * is the one the announcing connection serves (tools/list on it, all pages), not a fresh
 * process's: a tool the plugin added at runtime exists only in that process's memory. Only
 * when that connection has ended (or runs another version than the installed one) does the
 * sync re-discover with a fresh process, as `plugin sync` does. The process that announced the
 * change keeps running.
 *
 * Bounded work under a notification storm: per plugin, the first notification arms one timer
 * (`debounceMs`); notifications meanwhile are absorbed; at most one sync runs at a time, and
 * notifications during it ask for exactly one more sync afterwards.
 */
import type { Logger } from '../core/logger.ts';
import type { PluginService } from '../plugins/service.ts';
import type { AnnouncedToolList, Supervisor } from '../runtime/index.ts';

/** Default quiet time between a plugin's first notification and its sync (ms). */
export const TOOL_LIST_DEBOUNCE_MS = 500;

/** The follower; `close` stops following and waits for a running sync. */
export interface ToolListFollower {
  close(): Promise<void>;
}

interface PluginState {
  timer: NodeJS.Timeout | undefined;
  running: Promise<void> | undefined;
  /** A notification arrived while the sync ran: sync once more afterwards. */
  again: boolean;
  /** The connection that announced last: the next sync reads the list from it. */
  announced: AnnouncedToolList;
}

/** Starts following the supervisor's tools/list_changed notifications. */
export function createToolListFollower(deps: {
  supervisor: Pick<Supervisor, 'onToolListChanged'>;
  plugins: Pick<PluginService, 'sync'>;
  logger: Logger;
  debounceMs?: number;
}): ToolListFollower {
  const debounceMs = deps.debounceMs ?? TOOL_LIST_DEBOUNCE_MS;
  const states = new Map<string, PluginState>();
  let closed = false;

  function arm(pluginId: string, state: PluginState): void {
    state.timer = setTimeout(() => {
      state.timer = undefined;
      state.running = sync(pluginId, state);
    }, debounceMs);
    state.timer.unref();
  }

  async function sync(pluginId: string, state: PluginState): Promise<void> {
    try {
      const { announced } = state;
      const discovery = await announced.discover().catch((error: unknown) => {
        // The announcing connection ended meanwhile (what it held in memory went with it): discover afresh.
        deps.logger.warn({ err: error, pluginId }, 'could not list the tools of the connection that announced a change; re-discovering');
        return undefined;
      });
      const report = await deps.plugins.sync(pluginId, { keepRunning: true, ...(discovery === undefined ? {} : { announced: { version: announced.version, discovery } }) });
      const { inserted, updated, deleted, revived } = report.tools;
      deps.logger.info({ plugin: report.plugin.name, inserted, updated, deleted, revived }, 'catalog followed the plugin\'s tools/list_changed');
    } catch (error) {
      // A removed plugin, one registered through the sync API, or a failed discovery: the catalog stays as it was.
      deps.logger.warn({ err: error, pluginId }, 'could not follow the plugin\'s tools/list_changed');
    } finally {
      state.running = undefined;
      if (state.again && !closed) {
        state.again = false;
        arm(pluginId, state);
      } else {
        states.delete(pluginId);
      }
    }
  }

  const unsubscribe = deps.supervisor.onToolListChanged((pluginId, announced) => {
    if (closed) return;
    const state = states.get(pluginId);
    if (state === undefined) {
      const fresh: PluginState = { timer: undefined, running: undefined, again: false, announced };
      states.set(pluginId, fresh);
      arm(pluginId, fresh);
    } else {
      state.announced = announced;
      if (state.running !== undefined) state.again = true;
    }
    // Otherwise a timer is armed: this notification is covered by its sync.
  });

  return {
    async close() {
      closed = true;
      unsubscribe();
      for (const state of states.values()) if (state.timer !== undefined) clearTimeout(state.timer);
      await Promise.all([...states.values()].map((state) => state.running));
      states.clear();
    },
  };
}
