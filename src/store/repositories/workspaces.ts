/**
 * @module store/repositories/workspaces
 * Workspaces and their projects (seed 003: plugins are enabled per workspace or per project).
 * Names are kebab-case and unique (a project's within its workspace).
 */
import type { Queryable } from '../database.ts';
import { toDate } from './mapping.ts';

/** A workspace. */
export interface WorkspaceRecord {
  id: string;
  name: string;
  displayName: string | null;
  createdAt: Date;
}

/** A project inside a workspace. */
export interface ProjectRecord {
  id: string;
  workspaceId: string;
  workspaceName: string;
  name: string;
  displayName: string | null;
  createdAt: Date;
}

interface WorkspaceRow {
  id: string;
  name: string;
  display_name: string | null;
  created_at: unknown;
}

interface ProjectRow extends WorkspaceRow {
  workspace_id: string;
  workspace_name: string;
}

const toWorkspace = (row: WorkspaceRow): WorkspaceRecord => ({
  id: row.id,
  name: row.name,
  displayName: row.display_name,
  createdAt: toDate(row.created_at),
});

const toProject = (row: ProjectRow): ProjectRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  workspaceName: row.workspace_name,
  name: row.name,
  displayName: row.display_name,
  createdAt: toDate(row.created_at),
});

/** Every workspace, by name. */
export async function listWorkspaces(db: Queryable): Promise<WorkspaceRecord[]> {
  const { rows } = await db.query<WorkspaceRow>('SELECT id, name, display_name, created_at FROM workspaces ORDER BY name');
  return rows.map(toWorkspace);
}

/** A workspace by name. */
export async function findWorkspaceByName(db: Queryable, name: string): Promise<WorkspaceRecord | undefined> {
  const { rows } = await db.query<WorkspaceRow>('SELECT id, name, display_name, created_at FROM workspaces WHERE name = $1', [name]);
  return rows[0] === undefined ? undefined : toWorkspace(rows[0]);
}

/** Creates a workspace (a duplicate name raises the unique violation for the caller to map). */
export async function insertWorkspace(db: Queryable, input: { name: string; displayName: string | null }): Promise<WorkspaceRecord> {
  const { rows } = await db.query<WorkspaceRow>(
    'INSERT INTO workspaces (name, display_name) VALUES ($1, $2) RETURNING id, name, display_name, created_at',
    [input.name, input.displayName],
  );
  return toWorkspace(rows[0]!);
}

const PROJECT_SELECT = `SELECT pr.id, pr.workspace_id, w.name AS workspace_name, pr.name, pr.display_name, pr.created_at
  FROM projects pr JOIN workspaces w ON w.id = pr.workspace_id`;

/** The projects of a workspace, by name. */
export async function listProjects(db: Queryable, workspaceId: string): Promise<ProjectRecord[]> {
  const { rows } = await db.query<ProjectRow>(`${PROJECT_SELECT} WHERE pr.workspace_id = $1 ORDER BY pr.name`, [workspaceId]);
  return rows.map(toProject);
}

/** A project by name within a workspace. */
export async function findProjectByName(db: Queryable, workspaceId: string, name: string): Promise<ProjectRecord | undefined> {
  const { rows } = await db.query<ProjectRow>(`${PROJECT_SELECT} WHERE pr.workspace_id = $1 AND pr.name = $2`, [workspaceId, name]);
  return rows[0] === undefined ? undefined : toProject(rows[0]);
}

/** Creates a project in a workspace. */
export async function insertProject(
  db: Queryable,
  input: { workspaceId: string; name: string; displayName: string | null },
): Promise<ProjectRecord> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO projects (workspace_id, name, display_name) VALUES ($1, $2, $3) RETURNING id',
    [input.workspaceId, input.name, input.displayName],
  );
  const { rows: full } = await db.query<ProjectRow>(`${PROJECT_SELECT} WHERE pr.id = $1`, [rows[0]!.id]);
  return toProject(full[0]!);
}

/** The enablement rows of a plugin, with workspace and project names (for `plugin show`). */
export async function listPluginEnablements(
  db: Queryable,
  pluginId: string,
): Promise<Array<{ workspace: string; project: string | null; enabled: boolean }>> {
  const { rows } = await db.query<{ workspace: string; project: string | null; enabled: boolean }>(
    `SELECT w.name AS workspace, pr.name AS project, e.enabled
       FROM plugin_enablements e JOIN workspaces w ON w.id = e.workspace_id LEFT JOIN projects pr ON pr.id = e.project_id
      WHERE e.plugin_id = $1 ORDER BY w.name, pr.name NULLS FIRST`,
    [pluginId],
  );
  return rows;
}

/** The MCP exposure mode each workspace sets (settings.exposureMode), keyed by both id and name. */
export async function listWorkspaceExposureModes(db: Queryable): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; name: string; mode: string | null }>(
    "SELECT id, name, settings->>'exposureMode' AS mode FROM workspaces WHERE settings ? 'exposureMode'",
  );
  const modes = new Map<string, string>();
  for (const row of rows) {
    if (row.mode === null) continue;
    modes.set(row.id, row.mode);
    modes.set(row.name, row.mode);
  }
  return modes;
}

/** Sets (or, with null, clears) a workspace's exposure mode; false when no such workspace. */
export async function setWorkspaceExposureMode(db: Queryable, name: string, mode: string | null): Promise<boolean> {
  const result =
    mode === null
      ? await db.query("UPDATE workspaces SET settings = settings - 'exposureMode', updated_at = now() WHERE name = $1", [name])
      : await db.query(
          "UPDATE workspaces SET settings = jsonb_set(settings, '{exposureMode}', to_jsonb($2::text)), updated_at = now() WHERE name = $1",
          [name, mode],
        );
  return result.affectedRows > 0;
}

/** Workspaces that show plugins' own names over MCP (settings.nativeNames, issue #12), by id and name. */
export async function listWorkspaceNativeNames(db: Queryable): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string; name: string }>("SELECT id, name FROM workspaces WHERE settings->'nativeNames' = 'true'::jsonb");
  return new Set(rows.flatMap((row) => [row.id, row.name]));
}

/** Turns a workspace's native names on or off; false when no such workspace. */
export async function setWorkspaceNativeNames(db: Queryable, name: string, on: boolean): Promise<boolean> {
  const result = on
    ? await db.query("UPDATE workspaces SET settings = jsonb_set(settings, '{nativeNames}', 'true'::jsonb), updated_at = now() WHERE name = $1", [name])
    : await db.query("UPDATE workspaces SET settings = settings - 'nativeNames', updated_at = now() WHERE name = $1", [name]);
  return result.affectedRows > 0;
}
