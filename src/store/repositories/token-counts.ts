/**
 * @module store/repositories/token-counts
 * Stored token counts of tools' provider-formatted schemas (migration 0113, issue #28): one row
 * per tool and provider, keyed for lookup by a hash of the exact JSON counted (`json_key`, a
 * non-negative integer below 2^53, so it reads back as an exact JS number on both engines).
 */
import type { Queryable } from '../database.ts';

/** One stored count. */
export interface TokenCountRow {
  toolId: string;
  provider: string;
  /** Hash of the tokenizer name and the compact JSON counted (0 <= key < 2^53). */
  key: number;
  tokens: number;
}

/** Every stored count, as two parallel columns (no object per row kept by the caller). */
export async function listTokenCounts(db: Queryable): Promise<{ keys: number[]; tokens: number[] }> {
  const { rows } = await db.query<{ json_key: number | string; tokens: number }>('SELECT json_key, tokens FROM tool_token_counts');
  const keys = new Array<number>(rows.length);
  const tokens = new Array<number>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    keys[i] = Number(rows[i]!.json_key);
    tokens[i] = rows[i]!.tokens;
  }
  return { keys, tokens };
}

const BATCH = 2_000;

/**
 * Stores counts (the last of several for one tool and provider wins), in batches; rows whose
 * tool no longer exists are skipped rather than failing the batch.
 */
export async function upsertTokenCounts(db: Queryable, rows: readonly TokenCountRow[]): Promise<void> {
  const unique = new Map<string, TokenCountRow>();
  for (const row of rows) unique.set(`${row.toolId}|${row.provider}`, row);
  const all = [...unique.values()];
  for (let start = 0; start < all.length; start += BATCH) {
    const batch = all.slice(start, start + BATCH);
    await db.query(
      `INSERT INTO tool_token_counts (tool_id, provider, json_key, tokens)
       SELECT u.tool_id, u.provider, u.json_key, u.tokens
         FROM unnest($1::uuid[], $2::text[], $3::int8[], $4::int4[]) AS u(tool_id, provider, json_key, tokens)
         JOIN tools t ON t.id = u.tool_id
       ON CONFLICT (tool_id, provider) DO UPDATE SET json_key = EXCLUDED.json_key, tokens = EXCLUDED.tokens`,
      [batch.map((r) => r.toolId), batch.map((r) => r.provider), batch.map((r) => String(r.key)), batch.map((r) => r.tokens)],
    );
  }
}
