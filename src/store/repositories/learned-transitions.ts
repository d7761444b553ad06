/**
 * @module store/repositories/learned-transitions
 * "Called after" transitions (migration 0110, issue #25): one row per (organisation scope, from
 * tool, to tool, contributor), written by selection/learning from guarded successful calls, with
 * the per-tool cap applied in the same transaction as the write.
 */
import type { BatchStatement, Database, Queryable } from '../database.ts';
import { timeParam } from './mapping.ts';

/** A transition to record. */
export interface TransitionWrite {
  orgScope: string;
  fromTool: string;
  toTool: string;
  contributor: string;
  at: Date;
}

/** A scope's transitions, aggregated: how many distinct contributors made each. */
export interface TransitionCount {
  fromTool: string;
  toTool: string;
  contributors: number;
}

/**
 * Records transitions (a contributor's repeat bumps `hits` and `last_seen_at`), then keeps at
 * most `perTool` rows per (scope, from tool), the least recently seen going first: every write
 * and trim in one `Database.batch` (one transaction; one message to the embedded store's thread
 * instead of begin, a statement each and commit, issue #28).
 */
export async function recordTransitions(db: Database, writes: readonly TransitionWrite[], caps: { perTool: number }): Promise<void> {
  const statements: BatchStatement[] = [];
  for (const write of writes) {
    if (write.fromTool === write.toTool) continue;
    statements.push({
      sql: `INSERT INTO learned_transitions (org_scope, from_tool, to_tool, contributor, created_at, last_seen_at)
       VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz)
       ON CONFLICT (org_scope, from_tool, to_tool, contributor)
       DO UPDATE SET hits = learned_transitions.hits + 1, last_seen_at = EXCLUDED.last_seen_at`,
      params: [write.orgScope, write.fromTool, write.toTool, write.contributor, timeParam(write.at)],
    });
  }
  for (const key of new Set(writes.map((write) => `${write.orgScope}\u0000${write.fromTool}`))) {
    const [orgScope, fromTool] = key.split('\u0000') as [string, string];
    statements.push({
      sql: `DELETE FROM learned_transitions WHERE (org_scope, from_tool, to_tool, contributor) IN (
         SELECT org_scope, from_tool, to_tool, contributor FROM learned_transitions WHERE org_scope = $1 AND from_tool = $2
          ORDER BY last_seen_at DESC, to_tool DESC, contributor DESC OFFSET $3)`,
      params: [orgScope, fromTool, caps.perTool],
    });
  }
  await db.batch(statements);
}

/** The transitions of one scope that may rank (tools whose learning is off on either side left out). */
export async function loadScopeTransitions(db: Queryable, orgScope: string): Promise<TransitionCount[]> {
  const { rows } = await db.query<{ from_tool: string; to_tool: string; n: number }>(
    `SELECT t.from_tool, t.to_tool, count(*)::int AS n FROM learned_transitions t
      WHERE t.org_scope = $1
        AND NOT EXISTS (SELECT 1 FROM learned_example_blocks b
                         WHERE b.tool_id IN (t.from_tool, t.to_tool) AND (b.org_scope IS NULL OR b.org_scope = t.org_scope))
      GROUP BY t.from_tool, t.to_tool
      ORDER BY t.from_tool, t.to_tool`,
    [orgScope],
  );
  return rows.map((row) => ({ fromTool: row.from_tool, toTool: row.to_tool, contributors: Number(row.n) }));
}

/** Deletes transitions not seen since `before` (retention); returns the scopes touched. */
export async function deleteExpiredTransitions(db: Queryable, before: Date): Promise<string[]> {
  const { rows } = await db.query<{ org_scope: string }>('DELETE FROM learned_transitions WHERE last_seen_at < $1::timestamptz RETURNING org_scope', [timeParam(before)]);
  return [...new Set(rows.map((row) => row.org_scope))];
}
