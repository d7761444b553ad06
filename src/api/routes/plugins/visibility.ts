/**
 * @module api/routes/plugins/visibility
 * What a caller may see of the installed plugins, shared by every plugin route group: a tenant
 * key (api/tenancy) sees only plugins holding a tool it may see, and of those only the tools it
 * may see; any other key sees everything. Hidden plugins read as not found, never forbidden.
 */
import type { Context } from 'hono';
import type { PluginService } from '../../../plugins/service.ts';
import type { Principal } from '../../../access/api-keys.ts';
import { principalWith, type ApiEnv } from '../../http.ts';
import { assertVisible, type TenantVisibility } from '../../tenancy.ts';

/** The tenant filters of the plugin routes. */
export interface PluginVisibility {
  /** Visible plugin names for the caller (undefined: unrestricted), after the `read` scope check. */
  pluginNames(c: Context<ApiEnv>): Promise<ReadonlySet<string> | undefined>;
  /** The `:id` plugin reference (id or name) when the caller may see it, else not_found. */
  plugin(c: Context<ApiEnv>): Promise<string>;
  /** Names of a plugin's tools the caller may see, or undefined when unrestricted. */
  toolNames(principal: Principal, plugin: string): Promise<ReadonlySet<string> | undefined>;
}

/** The plugin visibility of `tenancy`, reading plugins and their tools from `plugins`. */
export function createPluginVisibility(plugins: PluginService, tenancy: TenantVisibility): PluginVisibility {
  const pluginNames = (c: Context<ApiEnv>) => tenancy.visiblePluginNames(principalWith(c, 'read'));
  return {
    pluginNames,
    async plugin(c) {
      const reference = c.req.param('id')!;
      const visible = await pluginNames(c);
      if (visible !== undefined) assertVisible(visible, (await plugins.show(reference)).plugin.name, 'plugin');
      return reference;
    },
    async toolNames(principal, plugin) {
      const visibleTools = await tenancy.visibleToolIds(principal);
      if (visibleTools === undefined) return undefined;
      return new Set((await plugins.tools(plugin)).filter((tool) => visibleTools.has(tool.id)).map((tool) => tool.name));
    },
  };
}
