/**
 * @module store/repositories/bandit-stats
 * Beta posteriors per (tool, context key) (seed 001 §4.2 table 6, §5.5). Updates are one
 * `INSERT … ON CONFLICT DO UPDATE` adding to the stored counts, so concurrent outcomes for
 * the same arm never lose an increment.
 */
import type { Queryable } from '../database.ts';
import { jsonParam } from './mapping.ts';

/** One arm's posterior and counters. */
export interface BanditStatRecord {
  toolId: string;
  contextKey: string;
  alpha: number;
  beta: number;
  totalSelections: number;
  totalSuccesses: number;
}

/** An increment to one arm. Absent rows start from the prior Beta(1, 1). */
export interface BanditIncrement {
  toolId: string;
  alpha: number;
  beta: number;
  selections: number;
  successes: number;
}

/** Every arm of one context key. */
export async function listContextArms(db: Queryable, contextKey: string): Promise<BanditStatRecord[]> {
  const { rows } = await db.query<{ tool_id: string; alpha: number; beta_param: number; total_selections: number; total_successes: number }>(
    'SELECT tool_id, alpha, beta_param, total_selections, total_successes FROM tool_bandit_stats WHERE context_key = $1',
    [contextKey],
  );
  return rows.map((row) => ({
    toolId: row.tool_id,
    contextKey,
    alpha: Number(row.alpha),
    beta: Number(row.beta_param),
    totalSelections: Number(row.total_selections),
    totalSuccesses: Number(row.total_successes),
  }));
}

/**
 * The upsert that adds increments to arms: `source` is a relation of (tool_id, context_key,
 * alpha, beta, selections, successes), each row an increment of one arm (at most one row per
 * arm: a statement cannot update a row twice). Absent arms start from the prior Beta(1, 1); rows
 * for deleted tools are skipped; arms are taken in (context, tool) order, so concurrent writers
 * lock them in the same order. Shared by `incrementArms` and the outcome flush
 * (selection-outcomes.ts), so both add the same way.
 */
export function armIncrementUpsert(source: string): string {
  return `INSERT INTO tool_bandit_stats AS s (tool_id, context_key, alpha, beta_param, total_selections, total_successes, updated_at)
     SELECT x.tool_id, x.context_key, 1 + x.alpha, 1 + x.beta, x.selections, x.successes, now()
       FROM ${source} AS x
      WHERE EXISTS (SELECT 1 FROM tools t WHERE t.id = x.tool_id)
      ORDER BY x.context_key, x.tool_id
     ON CONFLICT (tool_id, context_key) DO UPDATE SET
       alpha = s.alpha + EXCLUDED.alpha - 1,
       beta_param = s.beta_param + EXCLUDED.beta_param - 1,
       total_selections = s.total_selections + EXCLUDED.total_selections,
       total_successes = s.total_successes + EXCLUDED.total_successes,
       updated_at = now()`;
}

/** Adds increments to arms of one context atomically (rows for deleted tools are skipped). */
export async function incrementArms(db: Queryable, contextKey: string, increments: readonly BanditIncrement[]): Promise<void> {
  if (increments.length === 0) return;
  const records = increments.map((i) => ({ tool_id: i.toolId, alpha: i.alpha, beta: i.beta, selections: i.selections, successes: i.successes }));
  await db.query(
    armIncrementUpsert(
      `(SELECT r.*, $2::text AS context_key
          FROM jsonb_to_recordset($1::jsonb) AS r(tool_id uuid, alpha double precision, beta double precision, selections bigint, successes bigint))`,
    ),
    [jsonParam(records), contextKey],
  );
}
