/**
 * @module composition/tenant-visibility
 * Tenant visibility for the HTTP API, decided by the selection engine's `visibleTools` (the
 * one place that applies policy, enablement and organisation) over the key's own context
 * (`tenantContext`), so a tenant key reads exactly the tools it could be offered. Errors of
 * that decision propagate: a read never falls back to "everything" (fail closed).
 */
import type { Principal } from '../access/api-keys.ts';
import { isTenantKey, tenantContext, type ResolvedScope, type TenantVisibility } from '../api/tenancy.ts';
import type { SelectionEngine } from '../selection/index.ts';
import type { Queryable } from '../store/database.ts';
import { findProject, findWorkspace } from '../store/repositories/candidates.ts';

/** Builds the API's tenant visibility over the selection engine; `db` resolves workspace and project names. */
export function createTenantVisibility(selection: SelectionEngine, options: { db?: Queryable } = {}): TenantVisibility {
  const visible = async (principal: Principal) => (isTenantKey(principal) ? (await selection.visibleTools(tenantContext(principal))).tools : undefined);
  return {
    async visibleToolIds(principal) {
      const tools = await visible(principal);
      return tools && new Set(tools.map((tool) => tool.id));
    },
    async visiblePluginNames(principal) {
      const tools = await visible(principal);
      return tools && new Set(tools.flatMap((tool) => (tool.pluginName ? [tool.pluginName] : [])));
    },
    async visibleCategoryIds(principal) {
      const tools = await visible(principal);
      return tools && new Set(tools.flatMap((tool) => (tool.categoryId ? [tool.categoryId] : [])));
    },
    async resolveScope(workspace, project): Promise<ResolvedScope | undefined> {
      // Without a database nothing resolves, and callers refuse what they cannot compare.
      if (options.db === undefined) return undefined;
      const found = await findWorkspace(options.db, workspace);
      if (found === undefined) return undefined;
      if (project === undefined || project === null) return { workspaceId: found.id, projectId: null };
      const inWorkspace = await findProject(options.db, found.id, project);
      return inWorkspace && { workspaceId: found.id, projectId: inWorkspace.id };
    },
  };
}
