/**
 * @module test/helpers/gateway-backend/local-backend/connection
 * One stdio connection per plugin, made on first use and again on the next use after the
 * process died (no backoff, no pool: this is the test backend). Concurrent first uses share
 * one connection attempt. A `tools/list_changed` notification reloads the plugin's tools.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError } from '../../../../src/core/errors.ts';
import type { PluginState } from './types.ts';

/** How connections are made and what happens when a plugin's tool list changes. */
export interface ConnectorOptions {
  stderr: 'inherit' | 'ignore';
  onToolListChanged(plugin: PluginState, client: Client): Promise<void>;
}

/** Connects plugins: `connect` throws what the SDK throws, `clientFor` turns it into `unavailable`. */
export function createConnector(options: ConnectorOptions): {
  connect(plugin: PluginState): Promise<Client>;
  clientFor(plugin: PluginState): Promise<Client>;
} {
  async function connect(plugin: PluginState): Promise<Client> {
    if (plugin.client) return plugin.client;
    if (plugin.connecting) return plugin.connecting;
    const { spec } = plugin;
    plugin.connecting = (async () => {
      const transport = new StdioClientTransport({
        command: spec.command,
        args: spec.args ?? [],
        env: { ...getDefaultEnvironment(), ...spec.env },
        ...(spec.cwd ? { cwd: spec.cwd } : {}),
        stderr: options.stderr,
      });
      const client = new Client({ name: 'quiver-local-test-backend', version: '0.1.0' });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onToolListChanged(plugin, client));
      client.onclose = () => {
        if (plugin.client === client) {
          plugin.client = undefined;
          plugin.transport = undefined;
        }
      };
      await client.connect(transport);
      plugin.transport = transport;
      plugin.client = client;
      return client;
    })();
    try {
      return await plugin.connecting;
    } finally {
      plugin.connecting = undefined;
    }
  }

  async function clientFor(plugin: PluginState): Promise<Client> {
    try {
      return await connect(plugin);
    } catch (error) {
      throw new QuiverError(ErrorCodes.unavailable, `plugin '${plugin.spec.name}' could not be started: ${(error as Error).message}`, { cause: error });
    }
  }

  return { connect, clientFor };
}
