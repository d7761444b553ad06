/**
 * @module store/repositories/learned-examples
 * Learned example queries (migration 0055, DESIGN §3.10): one row per (organisation scope,
 * tool, contributor, normalised text), written already redacted by selection/learning, with
 * the per-contributor and per-tool caps applied in the same transaction as the write.
 */
import type { Database, Queryable } from '../database.ts';
import { notFound } from '../../core/errors.ts';
import { isForeignKeyViolation, isUuid, timeParam, toDate } from './mapping.ts';

/** A stored learned example. */
export interface LearnedExampleRow {
  id: string;
  orgScope: string;
  toolId: string;
  text: string;
  contributor: string;
  source: 'gateway' | 'api';
  hits: number;
  createdAt: Date;
  lastSeenAt: Date;
}

/** A learned example to write (text already redacted). */
export interface LearnedExampleWrite {
  orgScope: string;
  toolId: string;
  text: string;
  textKey: string;
  contributor: string;
  source: 'gateway' | 'api';
  at: Date;
}

type Row = { id: string; org_scope: string; tool_id: string; text: string; contributor: string; source: 'gateway' | 'api'; hits: number; created_at: unknown; last_seen_at: unknown };

function toRow(row: Row): LearnedExampleRow {
  return {
    id: row.id,
    orgScope: row.org_scope,
    toolId: row.tool_id,
    text: row.text,
    contributor: row.contributor,
    source: row.source,
    hits: Number(row.hits),
    createdAt: toDate(row.created_at),
    lastSeenAt: toDate(row.last_seen_at),
  };
}

const COLUMNS = 'id, org_scope, tool_id, text, contributor, source, hits, created_at, last_seen_at';

const UPSERT_COLUMNS = 'org_scope, tool_id, text, text_key, contributor, source, created_at, last_seen_at';
const ON_CONFLICT = `ON CONFLICT (org_scope, tool_id, contributor, text_key)
     DO UPDATE SET hits = learned_examples.hits + 1, last_seen_at = EXCLUDED.last_seen_at, text = EXCLUDED.text
     RETURNING ${COLUMNS}`;
const UPSERT = `INSERT INTO learned_examples (${UPSERT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz, $7::timestamptz)
     ${ON_CONFLICT}`;
// The same write, unless an admin switched the tool's learning off in this scope or in every
// scope (asked in a statement of its own before, issue #28): then no row comes back.
const UPSERT_UNLESS_BLOCKED = `INSERT INTO learned_examples (${UPSERT_COLUMNS})
     SELECT $1::text, $2::uuid, $3::text, $4::text, $5::text, $6::text, $7::timestamptz, $7::timestamptz
      WHERE NOT EXISTS (SELECT 1 FROM learned_example_blocks b WHERE b.tool_id = $2::uuid AND (b.org_scope IS NULL OR b.org_scope = $1::text))
     ${ON_CONFLICT}`;
// Both trims in one statement (issue #28: one statement fewer per learned call): the
// contributor's cap first, then the tool's over what that leaves, as two DELETEs in a row did.
const TRIM = `WITH by_contributor AS (
       SELECT id FROM learned_examples WHERE org_scope = $1 AND tool_id = $2 AND contributor = $3
        ORDER BY last_seen_at DESC, id DESC OFFSET $4
     ), by_tool AS (
       SELECT id FROM learned_examples WHERE org_scope = $1 AND tool_id = $2 AND id NOT IN (SELECT id FROM by_contributor)
        ORDER BY last_seen_at DESC, id DESC OFFSET $5
     )
     DELETE FROM learned_examples WHERE id IN (SELECT id FROM by_contributor UNION ALL SELECT id FROM by_tool)
     RETURNING id`;

/**
 * Writes one example (a repeat of the same normalised text by the same contributor only bumps
 * `hits` and `last_seen_at`), then trims by recency: the contributor keeps at most
 * `perContributor` examples of the tool, the tool at most `perTool` in the scope. Write and
 * trims are one `Database.batch` (one transaction; one message to the embedded store's thread,
 * issue #28: it was begin, write, trim and commit). With `unlessBlocked`, nothing is written
 * (and nothing trimmed) when the tool's learning is off in the scope or everywhere: undefined.
 * Returns the written row and the ids removed by the trims (it may be among them).
 */
export async function writeLearnedExample(
  db: Database,
  write: LearnedExampleWrite,
  caps: { perTool: number; perContributor: number },
  options: { unlessBlocked?: boolean } = {},
): Promise<{ written: LearnedExampleRow; removed: string[] } | undefined> {
  const [upserted, trimmed] = await db.batch([
    {
      sql: options.unlessBlocked ? UPSERT_UNLESS_BLOCKED : UPSERT,
      params: [write.orgScope, write.toolId, write.text, write.textKey, write.contributor, write.source, timeParam(write.at)],
      stopIfEmpty: true,
    },
    { sql: TRIM, params: [write.orgScope, write.toolId, write.contributor, caps.perContributor, caps.perTool] },
  ]);
  const row = upserted?.rows[0] as Row | undefined;
  if (row === undefined) return undefined;
  return { written: toRow(row), removed: (trimmed?.rows ?? []).map((removed) => String(removed.id)) };
}

/** The examples of one scope that may rank (blocked tools left out), oldest first. */
export async function loadScopeExamples(db: Queryable, orgScope: string): Promise<LearnedExampleRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM learned_examples e
      WHERE e.org_scope = $1
        AND NOT EXISTS (SELECT 1 FROM learned_example_blocks b WHERE b.tool_id = e.tool_id AND (b.org_scope IS NULL OR b.org_scope = e.org_scope))
      ORDER BY e.created_at, e.id`,
    [orgScope],
  );
  return rows.map(toRow);
}

/** Examples of a tool, newest first; `orgScope` undefined lists every scope. */
export async function listLearnedExamples(db: Queryable, filter: { toolId: string; orgScope?: string | undefined; limit?: number }): Promise<LearnedExampleRow[]> {
  if (!isUuid(filter.toolId)) return [];
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM learned_examples
      WHERE tool_id = $1 AND ($2::text IS NULL OR org_scope = $2)
      ORDER BY last_seen_at DESC, id DESC LIMIT $3`,
    [filter.toolId, filter.orgScope ?? null, filter.limit ?? 1000],
  );
  return rows.map(toRow);
}

/** Deletes a tool's examples (all, or the listed ids) in one scope or every scope; returns the deleted rows' scopes. */
export async function deleteLearnedExamples(db: Queryable, filter: { toolId: string; orgScope?: string | undefined; ids?: readonly string[] | undefined }): Promise<{ id: string; orgScope: string }[]> {
  if (!isUuid(filter.toolId)) return [];
  const ids = filter.ids?.filter(isUuid);
  if (ids !== undefined && ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; org_scope: string }>(
    `DELETE FROM learned_examples
      WHERE tool_id = $1 AND ($2::text IS NULL OR org_scope = $2) AND ($3::uuid[] IS NULL OR id = ANY($3::uuid[]))
      RETURNING id, org_scope`,
    [filter.toolId, filter.orgScope ?? null, ids ?? null],
  );
  return rows.map((row) => ({ id: row.id, orgScope: row.org_scope }));
}

/** Switches learning off (blocked) or back on for a tool in one scope, or every scope (`null`). */
export async function setLearningBlocked(db: Queryable, orgScope: string | null, toolId: string, blocked: boolean): Promise<void> {
  if (!isUuid(toolId)) throw notFound('tool', toolId);
  if (blocked) {
    try {
      await db.query('INSERT INTO learned_example_blocks (org_scope, tool_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [orgScope, toolId]);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound('tool', toolId);
      throw error;
    }
  } else {
    await db.query('DELETE FROM learned_example_blocks WHERE tool_id = $1 AND org_scope IS NOT DISTINCT FROM $2', [toolId, orgScope]);
  }
}

/** The scopes in which a tool's learning is off (`null` = every scope). */
export async function learningBlocks(db: Queryable, toolId: string): Promise<(string | null)[]> {
  if (!isUuid(toolId)) return [];
  const { rows } = await db.query<{ org_scope: string | null }>('SELECT org_scope FROM learned_example_blocks WHERE tool_id = $1 ORDER BY org_scope NULLS FIRST', [toolId]);
  return rows.map((row) => row.org_scope);
}

/** Deletes examples not seen since `before` (retention); returns the scopes touched. */
export async function deleteExpiredExamples(db: Queryable, before: Date): Promise<string[]> {
  const { rows } = await db.query<{ org_scope: string }>('DELETE FROM learned_examples WHERE last_seen_at < $1::timestamptz RETURNING org_scope', [timeParam(before)]);
  return [...new Set(rows.map((row) => row.org_scope))];
}

/** Learned example counts per tool in a scope (or every scope). */
export async function countLearnedExamples(db: Queryable, orgScope: string | undefined): Promise<Map<string, number>> {
  const { rows } = await db.query<{ tool_id: string; n: number }>(
    'SELECT tool_id, count(*)::int AS n FROM learned_examples WHERE ($1::text IS NULL OR org_scope = $1) GROUP BY tool_id',
    [orgScope ?? null],
  );
  return new Map(rows.map((row) => [row.tool_id, Number(row.n)]));
}

/** The request of a selection event and who made it (for an outcome reported through the API). */
export async function findEventRequest(db: Queryable, eventId: string): Promise<{ query: string; orgId: string | null; userId: string | null; sessionId: string | null } | undefined> {
  if (!isUuid(eventId)) return undefined;
  const { rows } = await db.query<{ query_text: string; org_id: string | null; user_id: string | null; session_id: string | null }>(
    'SELECT query_text, org_id, user_id, session_id FROM tool_selection_events WHERE id = $1',
    [eventId],
  );
  const row = rows[0];
  return row ? { query: row.query_text, orgId: row.org_id, userId: row.user_id, sessionId: row.session_id } : undefined;
}
