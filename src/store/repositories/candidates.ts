/**
 * @module store/repositories/candidates
 * What the selection pipeline reads from the catalog on a cache miss (seed 001 §5.2): the
 * active tools with their plugin, a cheap change signature, and workspace / project lookups.
 */
import type { Queryable } from '../database.ts';
import { NAME_SEPARATOR } from '../../core/names.ts';
import type { ToolRecord } from '../../core/tool.ts';
import { isUuid } from './mapping.ts';

/** A tool as the pipeline ranks and formats it. */
export type SelectionCandidate = Pick<
  ToolRecord,
  | 'id' | 'name' | 'qualifiedName' | 'displayName' | 'pluginId' | 'pluginName' | 'orgId' | 'categoryId' | 'categoryName'
  | 'description' | 'parameters' | 'summary' | 'tags' | 'whenToUse' | 'whenNotToUse' | 'exampleQueries'
  | 'isAlwaysPinned' | 'pinWeight' | 'contentHash' | 'annotations'
> & {
  /** The plugin's seed 002 visibility tier (`on-demand` for plugin-less tools). */
  visibility: 'always' | 'on-demand' | 'silent';
  /** The MCP `outputSchema` the tool declared (issue #12: passed through to clients). */
  returnSchema?: Record<string, unknown> | null;
  /** MCP tool fields the catalog has no column for (`icons`, `execution`, `_meta`), as discovered (issue #12). */
  mcpFields?: Record<string, unknown> | null;
  /** The client capabilities the plugin lists the tool for only (migration 0111, issue #24); empty: none. */
  clientRequirements?: readonly string[];
};

interface CandidateRow {
  id: string;
  name: string;
  display_name: string | null;
  plugin_id: string | null;
  plugin_name: string | null;
  org_id: string | null;
  category_id: string | null;
  category_name: string | null;
  description: string;
  parameters_schema: Record<string, unknown>;
  function_summary: string | null;
  tags: string[];
  when_to_use: string[];
  limitations: string[];
  example_queries: unknown;
  is_always_pinned: boolean;
  pin_weight: number;
  content_hash: string;
  annotations: Record<string, unknown> | null;
  plugin_visibility: 'always' | 'on-demand' | 'silent' | null;
  return_schema: Record<string, unknown> | null;
  mcp_fields: Record<string, unknown> | null;
  client_requirements: string[] | null;
}

function toCandidate(row: CandidateRow): SelectionCandidate {
  return {
    id: row.id,
    name: row.name,
    qualifiedName: row.plugin_name === null ? row.name : `${row.plugin_name}${NAME_SEPARATOR}${row.name}`,
    displayName: row.display_name,
    pluginId: row.plugin_id,
    pluginName: row.plugin_name,
    orgId: row.org_id,
    categoryId: row.category_id,
    categoryName: row.category_name,
    description: row.description,
    parameters: row.parameters_schema,
    summary: row.function_summary,
    tags: row.tags,
    whenToUse: row.when_to_use,
    whenNotToUse: row.limitations,
    exampleQueries: Array.isArray(row.example_queries) ? row.example_queries.filter((q): q is string => typeof q === 'string') : [],
    isAlwaysPinned: row.is_always_pinned,
    pinWeight: row.pin_weight,
    contentHash: row.content_hash,
    annotations: row.annotations ?? {},
    visibility: row.plugin_visibility ?? 'on-demand',
    returnSchema: row.return_schema,
    mcpFields: row.mcp_fields,
    clientRequirements: row.client_requirements ?? [],
  };
}

/**
 * Every active, non-deleted tool whose plugin (if any) is not deleted, in catalog order
 * (seed 001 §5.2: pin_weight descending, then name). Enablement and org filtering happen
 * per scope in the pipeline, on this one snapshot.
 */
export async function listActiveCandidates(db: Queryable): Promise<SelectionCandidate[]> {
  const { rows } = await db.query<CandidateRow>(
    `SELECT t.id, t.name, t.display_name, t.plugin_id, p.name AS plugin_name, t.org_id, t.category_id, c.name AS category_name,
            t.description, t.parameters_schema, t.function_summary, t.tags, t.when_to_use, t.limitations, t.example_queries,
            t.is_always_pinned, t.pin_weight, t.content_hash, t.annotations, p.visibility AS plugin_visibility,
            t.return_schema, t.metadata->'mcpFields' AS mcp_fields,
            (SELECT r.capabilities FROM tool_client_requirements r WHERE r.plugin_id = t.plugin_id AND r.tool_name = t.name) AS client_requirements
       FROM tools t
       LEFT JOIN plugins p ON p.id = t.plugin_id
       LEFT JOIN tool_categories c ON c.id = t.category_id
      WHERE t.status = 'active' AND t.deleted_at IS NULL
        AND (t.plugin_id IS NULL OR p.deleted_at IS NULL)
        -- A quarantined tool (tool pinning, migration 0052) is never a candidate until approved.
        AND NOT EXISTS (SELECT 1 FROM tool_pins q WHERE q.plugin_id = t.plugin_id AND q.tool_name = t.name AND q.quarantined_at IS NOT NULL)
      ORDER BY t.pin_weight DESC, p.name NULLS FIRST, t.name, t.id`,
  );
  return rows.map(toCandidate);
}

/** The tools with these ids (deleted or not), for resolving reported calls. */
export async function findCandidatesByIds(db: Queryable, ids: readonly string[]): Promise<SelectionCandidate[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<CandidateRow>(
    `SELECT t.id, t.name, t.display_name, t.plugin_id, p.name AS plugin_name, t.org_id, t.category_id, c.name AS category_name,
            t.description, t.parameters_schema, t.function_summary, t.tags, t.when_to_use, t.limitations, t.example_queries,
            t.is_always_pinned, t.pin_weight, t.content_hash, t.annotations, p.visibility AS plugin_visibility,
            t.return_schema, t.metadata->'mcpFields' AS mcp_fields,
            (SELECT r.capabilities FROM tool_client_requirements r WHERE r.plugin_id = t.plugin_id AND r.tool_name = t.name) AS client_requirements
       FROM tools t
       LEFT JOIN plugins p ON p.id = t.plugin_id
       LEFT JOIN tool_categories c ON c.id = t.category_id
      WHERE t.id = ANY($1::uuid[])`,
    [[...ids]],
  );
  return rows.map(toCandidate);
}

/**
 * A signature that changes whenever a tool or plugin row changes (count and latest update of
 * each), so an expired snapshot is reloaded only when something really changed.
 */
export async function catalogSignature(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ tools: number; tools_at: unknown; plugins: number; plugins_at: unknown }>(
    `SELECT (SELECT count(*) FROM tools) AS tools, (SELECT max(updated_at) FROM tools)::text AS tools_at,
            (SELECT count(*) FROM plugins) AS plugins, (SELECT max(updated_at) FROM plugins)::text AS plugins_at`,
  );
  const row = rows[0];
  return row === undefined ? '' : `${row.tools}:${String(row.tools_at)}:${row.plugins}:${String(row.plugins_at)}`;
}

/** A workspace or project found by name or id. */
export interface ScopeRef {
  id: string;
  name: string;
}

/** Finds a workspace by id or name. */
export async function findWorkspace(db: Queryable, nameOrId: string): Promise<ScopeRef | undefined> {
  const { rows } = await db.query<ScopeRef>(
    isUuid(nameOrId) ? 'SELECT id, name FROM workspaces WHERE id = $1' : 'SELECT id, name FROM workspaces WHERE name = $1',
    [nameOrId],
  );
  return rows[0];
}

/** Finds a project of a workspace by id or name. */
export async function findProject(db: Queryable, workspaceId: string, nameOrId: string): Promise<ScopeRef | undefined> {
  const { rows } = await db.query<ScopeRef>(
    isUuid(nameOrId)
      ? 'SELECT id, name FROM projects WHERE workspace_id = $1 AND id = $2'
      : 'SELECT id, name FROM projects WHERE workspace_id = $1 AND name = $2',
    [workspaceId, nameOrId],
  );
  return rows[0];
}
