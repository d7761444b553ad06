/**
 * @module test/helpers/gateway-backend/local-backend/passthrough-methods
 * Resources and prompts, passed through to the plugins: lists fan out to every listed plugin
 * with the capability (`allSettled`: a failing plugin becomes a warning, the rest still
 * answer), reads and gets go to the named plugin.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Prompt, Resource } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError } from '../../../../src/core/errors.ts';
import type { AggregatedList, BackendSession, GatewayBackend } from '../../../../src/gateway/backend.ts';
import { listedPlugin, pluginListed } from './access.ts';
import { collectPages } from './pages.ts';
import type { BackendState } from './types.ts';
import { upstreamError } from './upstream-error.ts';

/** The resource and prompt methods over the shared state. */
export function createPassthroughMethods(
  state: BackendState,
): Pick<GatewayBackend, 'listResources' | 'readResource' | 'listPrompts' | 'getPrompt'> {
  const { plugins } = state;

  async function fanOut<T>(session: BackendSession, capability: 'resources' | 'prompts', list: (client: Client) => Promise<T[]>): Promise<AggregatedList<T>> {
    const targets = [...plugins.values()].filter((plugin) => pluginListed(plugin, session));
    const settled = await Promise.allSettled(
      targets.map(async (plugin) => {
        const client = await state.clientFor(plugin);
        if (!client.getServerCapabilities()?.[capability]) return [];
        return (await list(client)).map((item) => ({ pluginName: plugin.spec.name, item }));
      }),
    );
    const items: AggregatedList<T>['items'] = [];
    const failures: string[] = [];
    settled.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') items.push(...outcome.value);
      else failures.push(`plugin '${targets[index]!.spec.name}': ${(outcome.reason as Error).message}`);
    });
    return { items, warnings: failures };
  }

  return {
    listResources(session) {
      return fanOut<Resource>(session, 'resources', (client) =>
        collectPages(async (cursor) => {
          const page = await client.listResources(cursor ? { cursor } : undefined);
          return { items: page.resources, nextCursor: page.nextCursor };
        }),
      );
    },

    async readResource(session, pluginName, uri, callOptions = {}) {
      const plugin = listedPlugin(plugins, session, pluginName);
      if (!plugin) throw new QuiverError(ErrorCodes.notFound, `resource '${uri}' was not found`);
      const client = await state.clientFor(plugin);
      try {
        return await client.readResource({ uri }, callOptions.signal ? { signal: callOptions.signal } : undefined);
      } catch (error) {
        throw upstreamError(plugin.spec, `a read of '${uri}'`, error, callOptions.signal);
      }
    },

    listPrompts(session) {
      return fanOut<Prompt>(session, 'prompts', async (client) => (await client.listPrompts()).prompts);
    },

    async getPrompt(session, pluginName, name, args, callOptions = {}) {
      const plugin = listedPlugin(plugins, session, pluginName);
      if (!plugin) throw new QuiverError(ErrorCodes.notFound, `prompt '${name}' was not found`);
      const client = await state.clientFor(plugin);
      try {
        return await client.getPrompt({ name, arguments: args }, callOptions.signal ? { signal: callOptions.signal } : undefined);
      } catch (error) {
        throw upstreamError(plugin.spec, `prompt '${name}'`, error, callOptions.signal);
      }
    },
  };
}
