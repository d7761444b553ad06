/**
 * @module plugins/service/records
 * Lookups every part of the plugins service starts from: a plugin by name or id, a scope by
 * names, a plugin as fronts may see it (no secret values), and all of a plugin's catalog tools.
 */
import { z } from 'zod';
import { notFound } from '../../core/errors.ts';
import { credentialSpecSchema, type CredentialSpec } from '../../core/plugin-metadata.ts';
import type { ToolRecord } from '../../core/tool.ts';
import type { Queryable } from '../../store/database.ts';
import { isUuid } from '../../store/repositories/mapping.ts';
import { findPluginRecordById, findPluginRecordByName, type PluginRecord } from '../../store/repositories/plugins.ts';
import { listSecrets } from '../../store/repositories/secrets.ts';
import { findProjectByName, findWorkspaceByName, type ProjectRecord, type WorkspaceRecord } from '../../store/repositories/workspaces.ts';
import type { PluginContext } from './context.ts';
import { DEFAULT_WORKSPACE, type PublicPlugin, type ScopeInput } from './types.ts';

/** A plugin's stored credential declarations; a malformed column reads as none. */
export function parseCredentials(value: unknown): CredentialSpec[] {
  const parsed = z.array(credentialSpecSchema).safeParse(value);
  return parsed.success ? parsed.data : [];
}

/** A plugin by name or id; `not_found` for an unknown one, or a removed one unless `includeRemoved`. */
export async function requirePlugin(
  context: PluginContext,
  reference: string,
  options: { includeRemoved?: boolean; queryable?: Queryable } = {},
): Promise<PluginRecord> {
  const queryable = options.queryable ?? context.db;
  const record = isUuid(reference) ? await findPluginRecordById(queryable, reference) : await findPluginRecordByName(queryable, reference);
  if (record === undefined || (record.status === 'removed' && options.includeRemoved !== true)) throw notFound('plugin', reference);
  return record;
}

/** The workspace (default `default`) and project a scope names; `not_found` for either. */
export async function resolveScope(context: PluginContext, scope: ScopeInput): Promise<{ workspace: WorkspaceRecord; project: ProjectRecord | undefined }> {
  const workspaceName = scope.workspace ?? DEFAULT_WORKSPACE;
  const workspace = await findWorkspaceByName(context.db, workspaceName);
  if (workspace === undefined) throw notFound('workspace', workspaceName);
  if (scope.project === undefined) return { workspace, project: undefined };
  const project = await findProjectByName(context.db, workspace.id, scope.project);
  if (project === undefined) throw notFound('project', `${workspaceName}/${scope.project}`);
  return { workspace, project };
}

/** A plugin as fronts see it: each declared credential says whether it is set, never its value. */
export async function toPublic(context: PluginContext, record: PluginRecord): Promise<PublicPlugin> {
  const stored = new Set((await listSecrets(context.db, record.id)).map((row) => row.key));
  return { ...record, credentials: parseCredentials(record.credentials).map((credential) => ({ ...credential, set: stored.has(credential.name) })) };
}

/** Every live catalog tool of a plugin, read page by page. */
export async function allTools(context: PluginContext, pluginId: string): Promise<ToolRecord[]> {
  const tools: ToolRecord[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await context.catalog.listTools({ pluginId, limit: 500, offset });
    tools.push(...page.items);
    if (page.items.length < 500 || tools.length >= page.total) return tools;
  }
}
