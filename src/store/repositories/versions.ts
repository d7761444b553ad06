/**
 * @module store/repositories/versions
 * Immutable tool history (seed 001 §4.2, table 5): one row per version with the full snapshot,
 * the changed-field list and the reason. Rows are only ever inserted; rollback writes a new one.
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDate } from './mapping.ts';

/** One stored version of a tool. */
export interface ToolVersionRecord {
  id: string;
  toolId: string;
  version: number;
  /** The tool's state at this version (see `ToolSnapshot` in the catalog). */
  snapshot: Record<string, unknown>;
  changedFields: string[];
  changeReason: string | null;
  contentHash: string;
  schemaVersion: string;
  createdBy: string | null;
  createdAt: Date;
}

/** A version to insert. */
export interface NewToolVersion {
  toolId: string;
  version: number;
  snapshot: Record<string, unknown>;
  changedFields: readonly string[];
  changeReason: string | null;
  contentHash: string;
  schemaVersion: string;
  createdBy: string | null;
}

interface VersionRow {
  id: string;
  tool_id: string;
  version: number;
  snapshot: Record<string, unknown>;
  changed_fields: string[];
  change_reason: string | null;
  content_hash: string;
  schema_version: string;
  created_by: string | null;
  created_at: unknown;
}

const SELECT_VERSIONS = `SELECT id, tool_id, version, snapshot, changed_fields, change_reason, content_hash, schema_version,
  created_by, created_at FROM tool_versions`;

function toVersionRecord(row: VersionRow): ToolVersionRecord {
  return {
    id: row.id,
    toolId: row.tool_id,
    version: row.version,
    snapshot: row.snapshot,
    changedFields: row.changed_fields,
    changeReason: row.change_reason,
    contentHash: row.content_hash,
    schemaVersion: row.schema_version,
    createdBy: row.created_by,
    createdAt: toDate(row.created_at),
  };
}

/** Inserts versions in one statement. */
export async function insertToolVersions(db: Queryable, versions: readonly NewToolVersion[], now: Date): Promise<void> {
  if (versions.length === 0) return;
  const records = versions.map((v) => ({
    tool_id: v.toolId,
    version: v.version,
    snapshot: v.snapshot,
    changed_fields: v.changedFields,
    change_reason: v.changeReason,
    content_hash: v.contentHash,
    schema_version: v.schemaVersion,
    created_by: v.createdBy,
  }));
  await db.query(
    `INSERT INTO tool_versions (tool_id, version, snapshot, changed_fields, change_reason, content_hash, schema_version, created_by, created_at)
     SELECT x.tool_id, x.version, x.snapshot, x.changed_fields, x.change_reason, x.content_hash, x.schema_version, x.created_by, $2
     FROM jsonb_to_recordset($1::jsonb) AS x(tool_id uuid, version integer, snapshot jsonb, changed_fields text[],
       change_reason text, content_hash text, schema_version text, created_by text)`,
    [jsonParam(records), timeParam(now)],
  );
}

/** Every version of a tool, newest first. */
export async function listToolVersions(db: Queryable, toolId: string): Promise<ToolVersionRecord[]> {
  const { rows } = await db.query<VersionRow>(`${SELECT_VERSIONS} WHERE tool_id = $1 ORDER BY version DESC`, [toolId]);
  return rows.map(toVersionRecord);
}

/** One version of a tool. */
export async function findToolVersion(db: Queryable, toolId: string, version: number): Promise<ToolVersionRecord | undefined> {
  const { rows } = await db.query<VersionRow>(`${SELECT_VERSIONS} WHERE tool_id = $1 AND version = $2`, [toolId, version]);
  return rows[0] === undefined ? undefined : toVersionRecord(rows[0]);
}
