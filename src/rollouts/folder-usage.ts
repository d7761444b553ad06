/**
 * @module rollouts/folder-usage
 * Who uses a version's install folder (issue #29), read from the database: the plugin rows (an
 * installed plugin's own folder), the slots (active, canary, an open rollout's, an idle or failed
 * one still within the retention), and the folders the rollout history recorded as released
 * (their version labels, so a process still running them, or a recent call, keeps them). The
 * verdict itself is `keepReasons`, pure: a folder with no reason left is deleted by the sweep.
 */
import type { Queryable } from '../store/database.ts';
import { timeParam, toDate } from '../store/repositories/mapping.ts';

/** One thing that refers to a folder. */
export interface FolderReference {
  folder: string;
  pluginId: string;
  /** Version labels processes and call events of this use carry (`2.0.0`, `2.0.0+green`). */
  labels: string[];
  /** Why this reference keeps the folder now; null when it is history only (released). */
  holds: string | null;
}

type Row = Record<string, unknown>;

/** The folder a plugin row or staged install names, unless it is the user's own folder (in place). */
export function cacheFolderOf(source: { cachePath?: unknown; inPlace?: unknown } | null | undefined): string | null {
  if (source === null || source === undefined || source.inPlace === true) return null;
  return typeof source.cachePath === 'string' && source.cachePath !== '' ? source.cachePath : null;
}

/** Every plugin row naming a folder: an installed (not removed) plugin holds it. */
async function pluginReferences(db: Queryable): Promise<FolderReference[]> {
  const { rows } = await db.query<Row>(`SELECT id, name, version, status, source FROM plugins WHERE source->>'cachePath' IS NOT NULL`);
  return rows.flatMap((row) => {
    const folder = cacheFolderOf(row['source'] as Record<string, unknown>);
    if (folder === null) return [];
    const installed = row['status'] !== 'removed';
    return [{ folder, pluginId: String(row['id']), labels: [String(row['version'] ?? 'local')], holds: installed ? `plugin '${String(row['name'])}' is installed from it` : null }];
  });
}

/**
 * Every slot naming a folder. Active and canary slots and both slots of an open rollout hold it;
 * an idle or failed slot holds it until `retentionMs` after it left service (its `updated_at`);
 * a removed plugin's slots hold nothing.
 */
async function slotReferences(db: Queryable, now: Date, retentionMs: number): Promise<FolderReference[]> {
  const { rows } = await db.query<Row>(
    `SELECT d.plugin_id, d.slot, d.version, d.status, d.runtime_version, d.folder, d.updated_at, p.status AS plugin_status,
            EXISTS (SELECT 1 FROM plugin_rollouts r WHERE r.status IN ('verifying', 'running', 'paused')
                     AND (r.from_deployment = d.id OR r.to_deployment = d.id)) AS open
       FROM deployments d JOIN plugins p ON p.id = d.plugin_id WHERE d.folder IS NOT NULL`,
  );
  return rows.map((row) => {
    const status = String(row['status']);
    const slot = `${String(row['slot'])} slot (${String(row['version'])}, ${status})`;
    const leftAt = toDate(row['updated_at']).getTime();
    let holds: string | null = null;
    if (row['plugin_status'] === 'removed') holds = null;
    else if (status === 'active' || status === 'canary') holds = `the ${slot} serves from it`;
    else if (row['open'] === true) holds = `the ${slot} is part of an open rollout`;
    else if (now.getTime() - leftAt < retentionMs) holds = `the ${slot} is kept for inspection until ${new Date(leftAt + retentionMs).toISOString()}`;
    return { folder: String(row['folder']), pluginId: String(row['plugin_id']), labels: [String(row['runtime_version']), String(row['version'])], holds };
  });
}

/** Folders the rollout history recorded as released (an overwritten slot, an update outside a rollout). */
async function releasedReferences(db: Queryable): Promise<FolderReference[]> {
  const { rows } = await db.query<Row>(`SELECT plugin_id, details FROM plugin_rollout_events WHERE kind = 'folder' AND details->>'action' = 'released'`);
  return rows.flatMap((row) => {
    const details = (row['details'] ?? {}) as Record<string, unknown>;
    if (typeof details['folder'] !== 'string') return [];
    const labels = Array.isArray(details['labels']) ? details['labels'].map(String) : [];
    return [{ folder: details['folder'], pluginId: String(row['plugin_id']), labels, holds: null }];
  });
}

/** Everything the database says about install folders, grouped by folder. */
export async function folderReferences(db: Queryable, now: Date, retentionMs: number): Promise<Map<string, FolderReference[]>> {
  const all = [...(await pluginReferences(db)), ...(await slotReferences(db, now, retentionMs)), ...(await releasedReferences(db))];
  const byFolder = new Map<string, FolderReference[]>();
  for (const reference of all) byFolder.set(reference.folder, [...(byFolder.get(reference.folder) ?? []), reference]);
  return byFolder;
}

/** `pluginId\0label` of every version some replica called since `since` (their processes may still run there). */
export async function recentlyCalledLabels(db: Queryable, since: Date): Promise<Set<string>> {
  const { rows } = await db.query<Row>('SELECT DISTINCT plugin_id, version FROM plugin_call_events WHERE created_at >= $1::timestamptz AND version IS NOT NULL', [timeParam(since)]);
  return new Set(rows.map((row) => labelKey(String(row['plugin_id']), String(row['version']))));
}

/** The key of one version label of one plugin. */
export function labelKey(pluginId: string, label: string): string {
  return `${pluginId}\0${label}`;
}

/** What else than the database keeps a folder: processes here, calls anywhere, a recent touch on disk. */
export interface LiveUse {
  /** `labelKey`s of processes running on this replica. */
  running: ReadonlySet<string>;
  /** `labelKey`s called within the recent-call window on any replica. */
  recentlyCalled: ReadonlySet<string>;
  /** The folder was placed or reused by an install within the window (an install may be about to commit it). */
  touchedRecently: boolean;
}

/** Why a folder must stay; an empty list means nothing uses it. Pure. */
export function keepReasons(references: readonly FolderReference[], live: LiveUse): string[] {
  const reasons = references.flatMap((reference) => (reference.holds === null ? [] : [reference.holds]));
  for (const reference of references) {
    for (const label of reference.labels) {
      const key = labelKey(reference.pluginId, label);
      if (live.running.has(key)) reasons.push(`a process of version ${label} runs from it`);
      if (live.recentlyCalled.has(key)) reasons.push(`version ${label} was called recently`);
    }
  }
  if (live.touchedRecently) reasons.push('an install placed or reused it recently');
  return [...new Set(reasons)];
}
