/**
 * @module store/repositories/plugins
 * Installed plugins (seed 003 "Plugin Registry": source, resolved version, launch, manifest)
 * and their Plugin Intelligence Documents (seed 000 §6.2). Rows come back camelCased; the
 * plugins service owns every write. Tools are the catalog's (`tools.ts`), never written here.
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDate, toDateOrNull } from './mapping.ts';

/** Where a plugin came from (the schema's `source_type`). */
export type PluginSourceType = 'git' | 'npm' | 'path' | 'url' | 'sync' | 'openapi' | 'pypi' | 'container';
/** Lifecycle of an installed plugin. */
export type PluginStatus = 'active' | 'disabled' | 'failed' | 'removed';

/** A plugin row. */
export interface PluginRecord {
  id: string;
  name: string;
  displayName: string | null;
  description: string;
  version: string | null;
  sourceType: PluginSourceType;
  /** Source details (git: url, ref, commit, path; npm: spec, package, version, path; …). */
  source: Record<string, unknown>;
  /** How to start it (stdio command, args, env names, cwd; or an http url). */
  launch: Record<string, unknown> | null;
  manifest: Record<string, unknown> | null;
  manifestWarnings: string[];
  visibility: 'always' | 'on-demand' | 'silent';
  trustScore: number | null;
  trustLevel: string | null;
  status: PluginStatus;
  /** Resources, prompts and server info found by discovery. */
  discovery: Record<string, unknown>;
  /** Declared credentials (quiver.json `credentials`). */
  credentials: Array<Record<string, unknown>>;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

/** The install-time fields of a plugin, written whole by install and update. */
export type PluginInstallFields = Pick<
  PluginRecord,
  | 'name' | 'displayName' | 'description' | 'version' | 'sourceType' | 'source' | 'launch' | 'manifest'
  | 'manifestWarnings' | 'visibility' | 'discovery' | 'credentials'
>;

interface PluginRow {
  id: string;
  name: string;
  display_name: string | null;
  description: string;
  version: string | null;
  source_type: PluginSourceType;
  source: Record<string, unknown>;
  launch: Record<string, unknown> | null;
  manifest: Record<string, unknown> | null;
  manifest_warnings: string[];
  visibility: PluginRecord['visibility'];
  trust_score: number | null;
  trust_level: string | null;
  status: PluginStatus;
  discovery: Record<string, unknown>;
  credentials: Array<Record<string, unknown>>;
  created_at: unknown;
  updated_at: unknown;
  deleted_at: unknown;
}

const COLUMNS = `id, name, display_name, description, version, source_type, source, launch, manifest, manifest_warnings,
  visibility, trust_score, trust_level, status, discovery, credentials, created_at, updated_at, deleted_at`;

function toRecord(row: PluginRow): PluginRecord {
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    description: row.description,
    version: row.version,
    sourceType: row.source_type,
    source: row.source,
    launch: row.launch,
    manifest: row.manifest,
    manifestWarnings: row.manifest_warnings,
    visibility: row.visibility,
    trustScore: row.trust_score,
    trustLevel: row.trust_level,
    status: row.status,
    discovery: row.discovery,
    credentials: row.credentials,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
    deletedAt: toDateOrNull(row.deleted_at),
  };
}

/** Finds a plugin by id (callers check the id is a UUID first). */
export async function findPluginRecordById(db: Queryable, id: string): Promise<PluginRecord | undefined> {
  const { rows } = await db.query<PluginRow>(`SELECT ${COLUMNS} FROM plugins WHERE id = $1`, [id]);
  return rows[0] === undefined ? undefined : toRecord(rows[0]);
}

/** Finds a plugin by its unique name (removed ones included). */
export async function findPluginRecordByName(db: Queryable, name: string): Promise<PluginRecord | undefined> {
  const { rows } = await db.query<PluginRow>(`SELECT ${COLUMNS} FROM plugins WHERE name = $1`, [name]);
  return rows[0] === undefined ? undefined : toRecord(rows[0]);
}

/** Lists plugins by name; removed ones only when asked. */
export async function listPluginRecords(db: Queryable, options: { includeRemoved: boolean }): Promise<PluginRecord[]> {
  const { rows } = await db.query<PluginRow>(
    `SELECT ${COLUMNS} FROM plugins WHERE $1::boolean OR status <> 'removed' ORDER BY name`,
    [options.includeRemoved],
  );
  return rows.map(toRecord);
}

/**
 * Rewrites the install fields and status of an existing plugin (update, re-adding a removed
 * one, or restoring the previous state when an update fails half-way).
 */
export async function updatePluginInstall(
  db: Queryable,
  id: string,
  fields: PluginInstallFields,
  status: PluginStatus,
  now: Date,
): Promise<PluginRecord> {
  const { rows } = await db.query<PluginRow>(
    `UPDATE plugins SET display_name = $2, description = $3, version = $4, source_type = $5, source = $6::jsonb, launch = $7::jsonb,
            manifest = $8::jsonb, manifest_warnings = $9::jsonb, visibility = $10, discovery = $11::jsonb, credentials = $12::jsonb,
            status = $14, deleted_at = CASE WHEN $14 = 'removed' THEN COALESCE(deleted_at, $13::timestamptz) ELSE NULL END, updated_at = $13
      WHERE id = $1
      RETURNING ${COLUMNS}`,
    [
      id, fields.displayName, fields.description, fields.version, fields.sourceType, jsonParam(fields.source),
      fields.launch === null ? null : jsonParam(fields.launch), fields.manifest === null ? null : jsonParam(fields.manifest),
      jsonParam(fields.manifestWarnings), fields.visibility, jsonParam(fields.discovery), jsonParam(fields.credentials), timeParam(now),
      status,
    ],
  );
  return toRecord(rows[0]!);
}

/** The install fields of a record (what `updatePluginInstall` writes back to restore it). */
export function installFieldsOf(record: PluginRecord): PluginInstallFields {
  return {
    name: record.name,
    displayName: record.displayName,
    description: record.description,
    version: record.version,
    sourceType: record.sourceType,
    source: record.source,
    launch: record.launch,
    manifest: record.manifest,
    manifestWarnings: record.manifestWarnings,
    visibility: record.visibility,
    discovery: record.discovery,
    credentials: record.credentials,
  };
}

/** Deletes every enablement row of a plugin (it is being removed). */
export async function deletePluginEnablements(db: Queryable, pluginId: string): Promise<void> {
  await db.query('DELETE FROM plugin_enablements WHERE plugin_id = $1', [pluginId]);
}

/** Sets a plugin's status; `removed` also stamps `deleted_at`, anything else clears it. */
export async function setPluginStatus(db: Queryable, id: string, status: PluginStatus, now: Date): Promise<void> {
  await db.query(
    `UPDATE plugins SET status = $2, updated_at = $3, deleted_at = CASE WHEN $2 = 'removed' THEN $3::timestamptz ELSE NULL END WHERE id = $1`,
    [id, status, timeParam(now)],
  );
}

/** Deletes a plugin row outright (its enablements, secrets, tools and PID cascade): install compensation only. */
export async function deletePluginRecord(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM plugins WHERE id = $1', [id]);
}

/** Names of live (not removed) plugins whose source uses `cachePath`, other than `exceptId`. */
export async function pluginsUsingCachePath(db: Queryable, cachePath: string, exceptId: string | null): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT name FROM plugins WHERE source->>'cachePath' = $1 AND status <> 'removed' AND ($2::uuid IS NULL OR id <> $2::uuid) ORDER BY name`,
    [cachePath, exceptId],
  );
  return rows.map((row) => row.name);
}

/** A stored Plugin Intelligence Document (seed 000 §6.2). */
export interface IntelligenceRecord {
  id: string;
  pluginId: string;
  pluginName: string;
  version: string;
  pid: Record<string, unknown>;
  schemaVersion: string;
  contentHash: string;
  validationStatus: 'valid' | 'valid_with_warnings' | 'invalid';
  validationScore: number | null;
  validationErrors: string[];
  validationWarnings: string[];
  origin: 'shipped' | 'generated' | 'admin';
  createdAt: Date;
  updatedAt: Date;
}

/** The fields written for a PID. */
export interface IntelligenceFields {
  pluginId: string;
  version: string;
  pid: Record<string, unknown>;
  schemaVersion: string;
  contentHash: string;
  validationStatus: IntelligenceRecord['validationStatus'];
  validationScore: number | null;
  validationErrors: string[];
  validationWarnings: string[];
  origin: IntelligenceRecord['origin'];
}

interface IntelligenceRow {
  id: string;
  plugin_id: string;
  plugin_name: string;
  version: string;
  pid_content: Record<string, unknown>;
  schema_version: string;
  content_hash: string;
  validation_status: IntelligenceRecord['validationStatus'];
  validation_score: number | null;
  validation_errors: string[];
  validation_warnings: string[];
  origin: IntelligenceRecord['origin'];
  created_at: unknown;
  updated_at: unknown;
}

const PID_COLUMNS = `d.id, d.plugin_id, p.name AS plugin_name, d.version, d.pid_content, d.schema_version, d.content_hash,
  d.validation_status, d.validation_score, d.validation_errors, d.validation_warnings, d.origin, d.created_at, d.updated_at`;

function toIntelligence(row: IntelligenceRow): IntelligenceRecord {
  return {
    id: row.id,
    pluginId: row.plugin_id,
    pluginName: row.plugin_name,
    version: row.version,
    pid: row.pid_content,
    schemaVersion: row.schema_version,
    contentHash: row.content_hash.trim(),
    validationStatus: row.validation_status,
    validationScore: row.validation_score,
    validationErrors: row.validation_errors,
    validationWarnings: row.validation_warnings,
    origin: row.origin,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** The current PID of a plugin. */
export async function findIntelligence(db: Queryable, pluginId: string): Promise<IntelligenceRecord | undefined> {
  const { rows } = await db.query<IntelligenceRow>(
    `SELECT ${PID_COLUMNS} FROM plugin_intelligence_documents d JOIN plugins p ON p.id = d.plugin_id WHERE d.plugin_id = $1`,
    [pluginId],
  );
  return rows[0] === undefined ? undefined : toIntelligence(rows[0]);
}

/** Every PID of a live plugin, by plugin name (batch export and search). */
export async function listIntelligence(db: Queryable): Promise<IntelligenceRecord[]> {
  const { rows } = await db.query<IntelligenceRow>(
    `SELECT ${PID_COLUMNS} FROM plugin_intelligence_documents d JOIN plugins p ON p.id = d.plugin_id
      WHERE p.status <> 'removed' ORDER BY p.name`,
  );
  return rows.map(toIntelligence);
}

/** Creates or replaces the PID of a plugin. */
export async function upsertIntelligence(db: Queryable, fields: IntelligenceFields, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO plugin_intelligence_documents (plugin_id, version, pid_content, schema_version, content_hash, validation_status,
                                                validation_score, validation_errors, validation_warnings, origin, created_at, updated_at)
     VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11, $11)
     ON CONFLICT (plugin_id) DO UPDATE SET version = EXCLUDED.version, pid_content = EXCLUDED.pid_content,
       schema_version = EXCLUDED.schema_version, content_hash = EXCLUDED.content_hash,
       validation_status = EXCLUDED.validation_status, validation_score = EXCLUDED.validation_score,
       validation_errors = EXCLUDED.validation_errors, validation_warnings = EXCLUDED.validation_warnings,
       origin = EXCLUDED.origin, updated_at = EXCLUDED.updated_at`,
    [
      fields.pluginId, fields.version, jsonParam(fields.pid), fields.schemaVersion, fields.contentHash, fields.validationStatus,
      fields.validationScore, jsonParam(fields.validationErrors), jsonParam(fields.validationWarnings), fields.origin, timeParam(now),
    ],
  );
}
