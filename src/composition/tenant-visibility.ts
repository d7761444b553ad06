/**
 * @module composition/tenant-visibility
 * Tenant visibility for the HTTP API, decided by the selection engine's `visibleTools` (the
 * one place that applies policy, enablement and organisation), so a tenant key reads exactly
 * the tools it could be offered.
 */
import type { Principal } from '../access/api-keys.ts';
import { isTenantKey, type TenantVisibility } from '../api/tenancy.ts';
import type { SelectionEngine } from '../selection/index.ts';

/** The selection context a tenant key stands for. */
function contextOf(principal: Principal) {
  return {
    workspace: principal.workspaceId ?? 'default',
    ...(principal.projectId ? { project: principal.projectId } : {}),
    ...(principal.orgId ? { orgId: principal.orgId } : {}),
    ...(principal.userId ? { userId: principal.userId } : {}),
    ...(principal.roles.length > 0 ? { roles: principal.roles } : {}),
    ...(principal.tier ? { tier: principal.tier } : {}),
  };
}

/** Builds the API's tenant visibility over the selection engine. */
export function createTenantVisibility(selection: SelectionEngine): TenantVisibility {
  return {
    async visibleToolIds(principal) {
      if (!isTenantKey(principal)) return undefined;
      const { tools } = await selection.visibleTools(contextOf(principal));
      return new Set(tools.map((tool) => tool.id));
    },
    async visiblePluginNames(principal) {
      if (!isTenantKey(principal)) return undefined;
      const { tools } = await selection.visibleTools(contextOf(principal));
      return new Set(tools.flatMap((tool) => (tool.pluginName ? [tool.pluginName] : [])));
    },
  };
}
