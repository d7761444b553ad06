/**
 * @module test/helpers/gateway-backend/local-backend
 * THE TEST BACKEND of the gateway: a real, in-memory `GatewayBackend` over real MCP servers
 * started as processes with the SDK client over stdio, with a plain BM25 search. It exists so
 * the gateway is tested end to end (real servers, real calls, real crashes) and benchmarked
 * before the production backend over selection / runtime / plugins is wired. It is not that
 * backend: no database, no breakers, no retries; one process per plugin, restarted on the
 * next call after it dies.
 *
 * Access follows seed 004 §9: a plugin may be restricted to workspaces, and granted to
 * organisations, roles or users (any grant suffices; no grants = everyone); the session's
 * expert allow-list narrows further. What a session may not see does not exist for it.
 *
 * This file assembles the parts in `local-backend/`: `access` (who sees what), `connection`,
 * `plugin-tools` (listing a plugin's tools), `lexical` (the search), `tool-methods`,
 * `catalog-methods`, `passthrough-methods` (resources, prompts) and `upstream-error`.
 */
import { ErrorCodes, QuiverError } from '../../../src/core/errors.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import type { CatalogChange } from '../../../src/gateway/backend.ts';
import { createCatalogMethods } from './local-backend/catalog-methods.ts';
import { createConnector } from './local-backend/connection.ts';
import { createPassthroughMethods } from './local-backend/passthrough-methods.ts';
import { loadTools } from './local-backend/plugin-tools.ts';
import { createToolMethods } from './local-backend/tool-methods.ts';
import type { BackendState, LocalBackendOptions, LocalPluginSpec, LocalTestBackend, PluginState } from './local-backend/types.ts';

export { lexicalTokens } from './local-backend/lexical.ts';
export type { LocalBackendOptions, LocalPluginSpec, LocalTestBackend } from './local-backend/types.ts';

/** Starts every plugin (failures become warnings) and returns the backend. */
export async function createLocalTestBackend(options: LocalBackendOptions): Promise<LocalTestBackend> {
  const logger = (options.logger ?? silentLogger).child({ component: 'local-test-backend' });
  const listeners = new Set<(change: CatalogChange) => void>();
  const emit = (change: CatalogChange): void => {
    for (const listener of listeners) listener(change);
  };
  const warnings: string[] = [];
  const connector = createConnector({
    stderr: options.pluginStderr ?? 'ignore',
    async onToolListChanged(plugin, client) {
      try {
        await loadTools(plugin, client, warnings);
        emit({});
      } catch (error) {
        logger.warn({ err: error, plugin: plugin.spec.name }, 'reloading tools failed');
      }
    },
  });
  const state: BackendState = { options, plugins: new Map(), searches: [], outcomes: [], calls: [], warnings, clientFor: connector.clientFor, emit };
  const { plugins } = state;
  let closed = false;

  async function addPlugin(spec: LocalPluginSpec, announce: boolean): Promise<void> {
    if (plugins.has(spec.name)) throw new QuiverError(ErrorCodes.conflict, `plugin '${spec.name}' is already running`);
    const plugin: PluginState = { spec, client: undefined, transport: undefined, connecting: undefined, tools: [], originalNames: new Map(), documents: new Map() };
    plugins.set(spec.name, plugin);
    try {
      await loadTools(plugin, await connector.connect(plugin), warnings);
    } catch (error) {
      warnings.push(`plugin '${spec.name}' did not start: ${(error as Error).message}`);
      logger.warn({ err: error, plugin: spec.name }, 'plugin did not start');
    }
    if (announce) emit({});
  }

  // Start in parallel; the map keeps the configured order because addPlugin inserts before awaiting.
  await Promise.all(options.plugins.map((spec) => addPlugin(spec, false)));

  return {
    searches: state.searches,
    outcomes: state.outcomes,
    calls: state.calls,
    warnings,
    ...createToolMethods(state),
    ...createCatalogMethods(state),
    ...createPassthroughMethods(state),
    onCatalogChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    addPlugin: (spec) => addPlugin(spec, true),
    async removePlugin(name) {
      const plugin = plugins.get(name);
      if (!plugin) throw new QuiverError(ErrorCodes.notFound, `plugin '${name}' is not running`);
      plugins.delete(name);
      await plugin.client?.close().catch(() => {});
      emit({});
    },
    pluginPid: (name) => plugins.get(name)?.transport?.pid ?? undefined,
    allTools: () => [...plugins.values()].flatMap((plugin) => plugin.tools),
    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      await Promise.allSettled([...plugins.values()].map((plugin) => plugin.client?.close()));
      plugins.clear();
    },
  };
}
