/**
 * @module store/repositories/tool-pins
 * Rows of `tool_pins` (migration 0052): the approved definition of each plugin tool and its
 * quarantine when a later listing serves something else (trust/pinning decides; this only
 * reads and writes).
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDateOrNull } from './mapping.ts';

/** How a definition came to be approved. */
export type PinSource = 'verification' | 'admin' | 'first-discovery';

/** One tool's pin, with its quarantine when there is one. */
export interface ToolPinRecord {
  pluginId: string;
  toolName: string;
  approvedHash: string | null;
  approvedDefinition: Record<string, unknown> | null;
  approvedEntry: Record<string, unknown> | null;
  approvedBy: string | null;
  approvedAt: Date | null;
  source: PinSource | null;
  present: boolean;
  quarantinedAt: Date | null;
  quarantineReason: string | null;
  servedHash: string | null;
  servedDefinition: Record<string, unknown> | null;
  servedEntry: Record<string, unknown> | null;
}

/** A quarantined tool with its plugin's name (for refusals and listings). */
export interface QuarantinedToolRecord extends ToolPinRecord {
  pluginName: string;
}

interface PinRow {
  plugin_id: string;
  tool_name: string;
  approved_hash: string | null;
  approved_definition: Record<string, unknown> | null;
  approved_entry: Record<string, unknown> | null;
  approved_by: string | null;
  approved_at: unknown;
  source: PinSource | null;
  present: boolean;
  quarantined_at: unknown;
  quarantine_reason: string | null;
  served_hash: string | null;
  served_definition: Record<string, unknown> | null;
  served_entry: Record<string, unknown> | null;
  plugin_name?: string;
}

const COLUMNS = `tp.plugin_id, tp.tool_name, tp.approved_hash, tp.approved_definition, tp.approved_entry, tp.approved_by, tp.approved_at,
  tp.source, tp.present, tp.quarantined_at, tp.quarantine_reason, tp.served_hash, tp.served_definition, tp.served_entry`;

function toRecord(row: PinRow): ToolPinRecord {
  return {
    pluginId: row.plugin_id,
    toolName: row.tool_name,
    approvedHash: row.approved_hash,
    approvedDefinition: row.approved_definition,
    approvedEntry: row.approved_entry,
    approvedBy: row.approved_by,
    approvedAt: toDateOrNull(row.approved_at),
    source: row.source,
    present: row.present,
    quarantinedAt: toDateOrNull(row.quarantined_at),
    quarantineReason: row.quarantine_reason,
    servedHash: row.served_hash,
    servedDefinition: row.served_definition,
    servedEntry: row.served_entry,
  };
}

/** Every pin of a plugin, by tool name. */
export async function listToolPins(db: Queryable, pluginId: string): Promise<ToolPinRecord[]> {
  const { rows } = await db.query<PinRow>(`SELECT ${COLUMNS} FROM tool_pins tp WHERE tp.plugin_id = $1 ORDER BY tp.tool_name`, [pluginId]);
  return rows.map(toRecord);
}

/** Quarantined tools, of one plugin or of all, with their plugin names. */
export async function listQuarantinedTools(db: Queryable, pluginId?: string): Promise<QuarantinedToolRecord[]> {
  const { rows } = await db.query<PinRow>(
    `SELECT ${COLUMNS}, p.name AS plugin_name FROM tool_pins tp JOIN plugins p ON p.id = tp.plugin_id
      WHERE tp.quarantined_at IS NOT NULL AND p.deleted_at IS NULL AND ($1::uuid IS NULL OR tp.plugin_id = $1::uuid)
      ORDER BY p.name, tp.tool_name`,
    [pluginId ?? null],
  );
  return rows.map((row) => ({ ...toRecord(row), pluginName: row.plugin_name ?? '' }));
}

/** The quarantine of one tool, by plugin name and tool name; undefined when it is not quarantined. */
export async function findQuarantinedTool(db: Queryable, pluginName: string, toolName: string): Promise<QuarantinedToolRecord | undefined> {
  const { rows } = await db.query<PinRow>(
    `SELECT ${COLUMNS}, p.name AS plugin_name FROM tool_pins tp JOIN plugins p ON p.id = tp.plugin_id
      WHERE p.name = $1 AND p.deleted_at IS NULL AND tp.tool_name = $2 AND tp.quarantined_at IS NOT NULL`,
    [pluginName, toolName],
  );
  const row = rows[0];
  return row === undefined ? undefined : { ...toRecord(row), pluginName: row.plugin_name ?? '' };
}

/**
 * Whether a tool (by id) must be treated as quarantined: its pin is quarantined, or the tool is
 * unknown or deleted (fail closed). One statement: learning asks this for every called tool
 * (issue #28: it was a full catalog read of the tool and a pin read).
 */
export async function isToolQuarantined(db: Queryable, toolId: string): Promise<boolean> {
  const { rows } = await db.query<{ quarantined: boolean }>(
    `SELECT EXISTS (
              SELECT 1 FROM tool_pins tp JOIN plugins p ON p.id = tp.plugin_id AND p.deleted_at IS NULL
               WHERE tp.plugin_id = t.plugin_id AND tp.tool_name = t.name AND tp.quarantined_at IS NOT NULL
            ) AS quarantined
       FROM tools t WHERE t.id = $1 AND t.deleted_at IS NULL`,
    [toolId],
  );
  return rows[0]?.quarantined ?? true;
}

/** Writes pins (insert or replace by plugin and tool name). */
export async function upsertToolPins(db: Queryable, pins: readonly ToolPinRecord[], now: Date): Promise<void> {
  for (const pin of pins) {
    await db.query(
      `INSERT INTO tool_pins (plugin_id, tool_name, approved_hash, approved_definition, approved_entry, approved_by, approved_at, source, present,
                              quarantined_at, quarantine_reason, served_hash, served_definition, served_entry, updated_at)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7::timestamptz, $8, $9, $10::timestamptz, $11, $12, $13::jsonb, $14::jsonb, $15::timestamptz)
       ON CONFLICT (plugin_id, tool_name) DO UPDATE SET
         approved_hash = EXCLUDED.approved_hash, approved_definition = EXCLUDED.approved_definition, approved_entry = EXCLUDED.approved_entry,
         approved_by = EXCLUDED.approved_by, approved_at = EXCLUDED.approved_at, source = EXCLUDED.source, present = EXCLUDED.present,
         quarantined_at = EXCLUDED.quarantined_at, quarantine_reason = EXCLUDED.quarantine_reason, served_hash = EXCLUDED.served_hash,
         served_definition = EXCLUDED.served_definition, served_entry = EXCLUDED.served_entry, updated_at = EXCLUDED.updated_at`,
      [
        pin.pluginId,
        pin.toolName,
        pin.approvedHash,
        pin.approvedDefinition === null ? null : jsonParam(pin.approvedDefinition),
        pin.approvedEntry === null ? null : jsonParam(pin.approvedEntry),
        pin.approvedBy,
        pin.approvedAt === null ? null : timeParam(pin.approvedAt),
        pin.source,
        pin.present,
        pin.quarantinedAt === null ? null : timeParam(pin.quarantinedAt),
        pin.quarantineReason,
        pin.servedHash,
        pin.servedDefinition === null ? null : jsonParam(pin.servedDefinition),
        pin.servedEntry === null ? null : jsonParam(pin.servedEntry),
        timeParam(now),
      ],
    );
  }
}

/** Deletes the pins of these tools of a plugin. */
export async function deleteToolPins(db: Queryable, pluginId: string, toolNames: readonly string[]): Promise<void> {
  if (toolNames.length === 0) return;
  await db.query('DELETE FROM tool_pins WHERE plugin_id = $1 AND tool_name = ANY($2::text[])', [pluginId, [...toolNames]]);
}
