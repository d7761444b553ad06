/**
 * @module intelligence/acceptance-repository
 * The tables of migration 0071: which generation a plugin's current PID was adopted from (with
 * its hashes, who accepted it, when, and the shipped or admin-written document it replaced),
 * and the review state of a stored generation.
 */
import type { Queryable } from '../store/database.ts';
import { jsonParam, timeParam, toDate } from '../store/repositories/mapping.ts';
import type { JsonObject } from './types.ts';

/** Provenance of an accepted document. */
export interface AcceptanceRecord {
  generationId: string;
  /** The content hash of the generation accepted (over its sources' inputs). */
  generationHash: string;
  /** The content hash of the document as stored in the plugin's current PID. */
  documentHash: string;
  acceptedBy: string;
  acceptedAt: Date;
  /** Accepted although its sources had changed (`--force`). */
  forced: boolean;
  /** The shipped or admin-written document the accepted one replaced: later generations merge over it. */
  replacedDocument: JsonObject | null;
  replacedOrigin: string | null;
}

interface AcceptanceRow {
  generation_id: string;
  generation_hash: string;
  document_hash: string;
  accepted_by: string;
  accepted_at: unknown;
  forced: boolean;
  replaced_document: JsonObject | null;
  replaced_origin: string | null;
}

/** The acceptance of a plugin's current PID, if it was adopted from a generation. */
export async function findAcceptance(db: Queryable, pluginId: string): Promise<AcceptanceRecord | undefined> {
  const { rows } = await db.query<AcceptanceRow>(
    'SELECT generation_id, generation_hash, document_hash, accepted_by, accepted_at, forced, replaced_document, replaced_origin FROM pid_acceptances WHERE plugin_id = $1',
    [pluginId],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    generationId: row.generation_id,
    generationHash: row.generation_hash.trim(),
    documentHash: row.document_hash.trim(),
    acceptedBy: row.accepted_by,
    acceptedAt: toDate(row.accepted_at),
    forced: row.forced,
    replacedDocument: row.replaced_document,
    replacedOrigin: row.replaced_origin,
  };
}

/**
 * Records an acceptance. The replaced document is only overwritten when a non-generated one
 * was replaced this time: accepting twice in a row keeps the shipped document as the base.
 */
export async function upsertAcceptance(db: Queryable, pluginId: string, record: AcceptanceRecord): Promise<void> {
  await db.query(
    `INSERT INTO pid_acceptances (plugin_id, generation_id, generation_hash, document_hash, accepted_by, accepted_at, forced, replaced_document, replaced_origin)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)
     ON CONFLICT (plugin_id) DO UPDATE SET generation_id = EXCLUDED.generation_id, generation_hash = EXCLUDED.generation_hash,
       document_hash = EXCLUDED.document_hash, accepted_by = EXCLUDED.accepted_by, accepted_at = EXCLUDED.accepted_at, forced = EXCLUDED.forced,
       replaced_document = COALESCE(EXCLUDED.replaced_document, pid_acceptances.replaced_document),
       replaced_origin = COALESCE(EXCLUDED.replaced_origin, pid_acceptances.replaced_origin)`,
    [
      pluginId, record.generationId, record.generationHash, record.documentHash, record.acceptedBy.slice(0, 200), timeParam(record.acceptedAt), record.forced,
      record.replacedDocument === null ? null : jsonParam(record.replacedDocument), record.replacedOrigin,
    ],
  );
}

/** Sets the review state of a generation; false when that generation is no longer stored. */
export async function setReview(db: Queryable, generationId: string, review: 'accepted' | 'rejected', by: string, at: Date): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>('UPDATE pid_generations SET review = $2, reviewed_by = $3, reviewed_at = $4 WHERE id = $1 RETURNING id', [
    generationId, review, by.slice(0, 200), timeParam(at),
  ]);
  return rows.length > 0;
}
