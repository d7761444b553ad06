/**
 * @module store/repositories/tool-client-requirements
 * Rows of `tool_client_requirements` (migration 0111, issue #24): per plugin tool, the client
 * capabilities a 2026-07-28 plugin lists it for only. Written as a whole per plugin at each
 * install, sync and update; read with the selection candidates (`candidates.ts`).
 */
import type { Queryable } from '../database.ts';

/** Per tool name, the capabilities it needs (tools that need none are absent). */
export type ToolClientRequirements = Readonly<Record<string, readonly string[]>>;

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item) => b.includes(item));

/** The plugin's stored requirements. */
export async function readToolClientRequirements(db: Queryable, pluginId: string): Promise<Record<string, string[]>> {
  const { rows } = await db.query<{ tool_name: string; capabilities: string[] }>(
    'SELECT tool_name, capabilities FROM tool_client_requirements WHERE plugin_id = $1 ORDER BY tool_name',
    [pluginId],
  );
  return Object.fromEntries(rows.map((row) => [row.tool_name, row.capabilities]));
}

/**
 * Makes the plugin's rows exactly `requirements`. When anything changed, the plugin row's
 * `updated_at` moves too, so the catalog signature (`catalogSignature`) reloads the candidates
 * that carry them. Returns whether anything changed.
 */
export async function replaceToolClientRequirements(db: Queryable, pluginId: string, requirements: ToolClientRequirements, now: Date): Promise<boolean> {
  const stored = await readToolClientRequirements(db, pluginId);
  const wanted = Object.entries(requirements).filter(([, capabilities]) => capabilities.length > 0);
  const unchanged = wanted.length === Object.keys(stored).length && wanted.every(([name, capabilities]) => stored[name] !== undefined && sameSet(stored[name], capabilities));
  if (unchanged) return false;
  await db.query('DELETE FROM tool_client_requirements WHERE plugin_id = $1', [pluginId]);
  if (wanted.length > 0) {
    await db.query(
      `INSERT INTO tool_client_requirements (plugin_id, tool_name, capabilities)
       SELECT $1, x.tool_name, ARRAY(SELECT jsonb_array_elements_text(x.capabilities))
         FROM jsonb_to_recordset($2::jsonb) AS x(tool_name text, capabilities jsonb)`,
      [pluginId, JSON.stringify(wanted.map(([name, capabilities]) => ({ tool_name: name, capabilities: [...capabilities].sort() })))],
    );
  }
  await db.query('UPDATE plugins SET updated_at = GREATEST(updated_at, $2::timestamptz) WHERE id = $1', [pluginId, now.toISOString()]);
  return true;
}
