/**
 * @module store/repositories/enablement
 * Which plugins are in effect for a (workspace, project): the one query every consumer
 * (selection, gateway, plugin listing) uses (seed 003: workspace-global and project-scoped
 * enablement, with project opt-out).
 *
 * A plugin is effective for workspace W and project P when it is active and either
 * - enabled workspace-wide in W (a row with project_id NULL, enabled = true) and P has not
 *   opted out (no row for P with enabled = false), or
 * - enabled for P itself (a row for P with enabled = true).
 * With no project, only workspace-wide rows count.
 */
import type { Queryable } from '../database.ts';

/** A (workspace, project) scope given by ids. */
export interface EnablementScope {
  workspaceId: string;
  projectId?: string | null | undefined;
}

/** Ids of the plugins in effect for a scope. */
export async function effectivePluginIds(db: Queryable, scope: EnablementScope): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT p.id
       FROM plugins p
      WHERE p.status = 'active' AND p.deleted_at IS NULL
        AND (
          (EXISTS (SELECT 1 FROM plugin_enablements e
                    WHERE e.plugin_id = p.id AND e.workspace_id = $1 AND e.project_id IS NULL AND e.enabled)
           AND NOT EXISTS (SELECT 1 FROM plugin_enablements o
                    WHERE o.plugin_id = p.id AND o.workspace_id = $1 AND $2::uuid IS NOT NULL
                      AND o.project_id = $2::uuid AND NOT o.enabled))
          OR EXISTS (SELECT 1 FROM plugin_enablements e
                    WHERE e.plugin_id = p.id AND e.workspace_id = $1 AND $2::uuid IS NOT NULL
                      AND e.project_id = $2::uuid AND e.enabled)
        )
      ORDER BY p.name`,
    [scope.workspaceId, scope.projectId ?? null],
  );
  return rows.map((row) => row.id);
}

/** Sets (or replaces) the enablement row of a plugin for a workspace or one of its projects. */
export async function setEnablement(
  db: Queryable,
  input: { pluginId: string; workspaceId: string; projectId?: string | null | undefined; enabled: boolean },
): Promise<void> {
  await db.query(
    `INSERT INTO plugin_enablements (plugin_id, workspace_id, project_id, enabled)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (plugin_id, workspace_id, COALESCE(project_id, '00000000-0000-0000-0000-000000000000'::uuid))
     DO UPDATE SET enabled = EXCLUDED.enabled`,
    [input.pluginId, input.workspaceId, input.projectId ?? null, input.enabled],
  );
}

/** Removes the enablement row of a plugin for a workspace or project (back to inherited). */
export async function clearEnablement(
  db: Queryable,
  input: { pluginId: string; workspaceId: string; projectId?: string | null | undefined },
): Promise<boolean> {
  const result = await db.query(
    `DELETE FROM plugin_enablements
      WHERE plugin_id = $1 AND workspace_id = $2
        AND COALESCE(project_id, '00000000-0000-0000-0000-000000000000'::uuid) = COALESCE($3::uuid, '00000000-0000-0000-0000-000000000000'::uuid)`,
    [input.pluginId, input.workspaceId, input.projectId ?? null],
  );
  return result.affectedRows > 0;
}

/** Enables a plugin workspace-wide in the `default` workspace (no-op when already enabled). */
export async function enableInDefaultWorkspace(db: Queryable, pluginId: string): Promise<void> {
  await db.query(
    `INSERT INTO plugin_enablements (plugin_id, workspace_id, enabled)
     SELECT $1, id, true FROM workspaces WHERE name = 'default'
     ON CONFLICT (plugin_id, workspace_id, COALESCE(project_id, '00000000-0000-0000-0000-000000000000'::uuid)) DO NOTHING`,
    [pluginId],
  );
}
