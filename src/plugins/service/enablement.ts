/**
 * @module plugins/service/enablement
 * Where plugins are in effect: workspaces and their projects, enabling and disabling a plugin
 * in one of them (a project can opt out of a workspace-wide enablement), each workspace's MCP
 * exposure mode, and the tools in effect for a scope. Writes report `enablement` or `exposure`.
 */
import { z } from 'zod';
import { QuiverError, ErrorCodes, invalidInput, notFound } from '../../core/errors.ts';
import type { ToolRecord } from '../../core/tool.ts';
import { clearEnablement, effectivePluginIds, setEnablement } from '../../store/repositories/enablement.ts';
import { isUniqueViolation } from '../../store/repositories/mapping.ts';
import {
  insertProject,
  insertWorkspace,
  listProjects,
  listWorkspaceExposureModes,
  listWorkspaceNativeNames,
  listWorkspaces,
  setWorkspaceExposureMode,
  setWorkspaceNativeNames,
} from '../../store/repositories/workspaces.ts';
import type { PluginContext } from './context.ts';
import { allTools, requirePlugin, resolveScope } from './records.ts';
import type { PluginService } from './types.ts';

/** The workspace, project and enablement methods of the service. */
export type EnablementPart = Pick<
  PluginService,
  | 'enable'
  | 'disable'
  | 'effectiveTools'
  | 'listWorkspaces'
  | 'createWorkspace'
  | 'setWorkspaceExposureMode'
  | 'workspaceExposureModes'
  | 'setWorkspaceNativeNames'
  | 'workspaceNativeNames'
  | 'listProjects'
  | 'createProject'
>;

const scopeNameSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'names are kebab-case: lowercase letters, digits and dashes, 1-63 characters');

/** A workspace or project name, parsed; `what` names it in the error. */
function scopeName(what: 'workspace' | 'project', name: string): string {
  const parsed = scopeNameSchema.safeParse(name);
  if (!parsed.success) throw invalidInput(`invalid ${what} name '${name}': ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

/** Runs an insert, turning a duplicate name into `conflict`. */
async function insertUnique<T>(insert: () => Promise<T>, message: string): Promise<T> {
  try {
    return await insert();
  } catch (error) {
    if (isUniqueViolation(error)) throw new QuiverError(ErrorCodes.conflict, message, { cause: error });
    throw error;
  }
}

/** Creates the enablement part of the service. */
export function createEnablementPart(context: PluginContext): EnablementPart {
  const { db } = context;
  return {
    async enable(reference, scope = {}) {
      const record = await requirePlugin(context, reference);
      const { workspace, project } = await resolveScope(context, scope);
      await setEnablement(db, { pluginId: record.id, workspaceId: workspace.id, projectId: project?.id ?? null, enabled: true });
      context.changed({ kind: 'enablement', pluginId: record.id });
    },

    async disable(reference, scope = {}) {
      const record = await requirePlugin(context, reference);
      const { workspace, project } = await resolveScope(context, scope);
      if (project === undefined) {
        // Workspace-wide: drop the workspace row; projects that enabled it themselves keep it.
        await clearEnablement(db, { pluginId: record.id, workspaceId: workspace.id });
      } else {
        // A project: an explicit opt-out, which also wins over a workspace-wide enablement.
        await setEnablement(db, { pluginId: record.id, workspaceId: workspace.id, projectId: project.id, enabled: false });
      }
      context.changed({ kind: 'enablement', pluginId: record.id });
    },

    async effectiveTools(scope = {}) {
      const { workspace, project } = await resolveScope(context, scope);
      const ids = await effectivePluginIds(db, { workspaceId: workspace.id, projectId: project?.id ?? null });
      const tools: ToolRecord[] = [];
      for (const id of ids) tools.push(...(await allTools(context, id)));
      return tools;
    },

    listWorkspaces: () => listWorkspaces(db),

    async createWorkspace(input) {
      const name = scopeName('workspace', input.name);
      return insertUnique(() => insertWorkspace(db, { name, displayName: input.displayName ?? null }), `workspace '${input.name}' already exists`);
    },

    async setWorkspaceExposureMode(workspaceName, mode) {
      if (!(await setWorkspaceExposureMode(db, workspaceName, mode))) throw notFound('workspace', workspaceName);
      context.changed({ kind: 'exposure', workspace: workspaceName });
    },

    workspaceExposureModes: () => listWorkspaceExposureModes(db),

    async setWorkspaceNativeNames(workspaceName, on) {
      if (!(await setWorkspaceNativeNames(db, workspaceName, on))) throw notFound('workspace', workspaceName);
      context.changed({ kind: 'exposure', workspace: workspaceName });
    },

    workspaceNativeNames: () => listWorkspaceNativeNames(db),

    async listProjects(workspaceName) {
      const { workspace } = await resolveScope(context, { workspace: workspaceName });
      return listProjects(db, workspace.id);
    },

    async createProject(workspaceName, input) {
      const { workspace } = await resolveScope(context, { workspace: workspaceName });
      const name = scopeName('project', input.name);
      return insertUnique(
        () => insertProject(db, { workspaceId: workspace.id, name, displayName: input.displayName ?? null }),
        `project '${workspace.name}/${input.name}' already exists`,
      );
    },
  };
}
