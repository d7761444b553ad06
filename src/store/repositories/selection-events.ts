/**
 * @module store/repositories/selection-events
 * Selection events (seed 001 §4.2 table 7): written in batches off the hot path, completed
 * with the outcome later, and read back by the analytics of seed §8.4.
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDate, toDateOrNull } from './mapping.ts';

/** One selection to log. The id is chosen by the pipeline so it can be returned at once. */
export interface SelectionEventWrite {
  id: string;
  queryText: string;
  pageContext: string | null;
  orgId: string | null;
  userId: string | null;
  workspaceId: string | null;
  projectId: string | null;
  sessionId: string | null;
  contextKey: string;
  tier: string | null;
  provider: string;
  selectedToolIds: string[];
  candidateCount: number;
  selectionMethod: string;
  latencyMs: number;
  stageTimings: Record<string, number>;
  tokensUsed: number;
  tokensTotal: number;
  tokensSaved: number;
  warnings: string[];
  createdAt: Date;
}

/** Inserts events in one statement; an id already stored is skipped (a journal replayed after a kill, issue #23). */
export async function insertSelectionEvents(db: Queryable, events: readonly SelectionEventWrite[]): Promise<void> {
  if (events.length === 0) return;
  const records = events.map((e) => ({
    id: e.id,
    query_text: e.queryText,
    page_context: e.pageContext,
    org_id: e.orgId,
    user_id: e.userId,
    workspace_id: e.workspaceId,
    project_id: e.projectId,
    session_id: e.sessionId,
    context_key: e.contextKey,
    tier: e.tier,
    provider: e.provider,
    selected_tool_ids: e.selectedToolIds,
    candidate_count: e.candidateCount,
    selection_method: e.selectionMethod,
    latency_ms: e.latencyMs,
    stage_timings: e.stageTimings,
    tokens_used: e.tokensUsed,
    tokens_total: e.tokensTotal,
    tokens_saved: e.tokensSaved,
    warnings: e.warnings,
    created_at: timeParam(e.createdAt),
  }));
  await db.query(
    `INSERT INTO tool_selection_events (id, query_text, page_context, org_id, user_id, workspace_id, project_id, session_id,
       context_key, tier, provider, selected_tool_ids, candidate_count, selection_method, latency_ms, stage_timings,
       tokens_used, tokens_total, tokens_saved, warnings, created_at)
     SELECT x.id, x.query_text, x.page_context, x.org_id, x.user_id, x.workspace_id, x.project_id, x.session_id,
       x.context_key, x.tier, x.provider, x.selected_tool_ids, x.candidate_count, x.selection_method, x.latency_ms,
       x.stage_timings, x.tokens_used, x.tokens_total, x.tokens_saved, x.warnings, x.created_at
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, query_text text, page_context text, org_id text, user_id text,
       workspace_id uuid, project_id uuid, session_id text, context_key text, tier text, provider text,
       selected_tool_ids uuid[], candidate_count integer, selection_method text, latency_ms double precision,
       stage_timings jsonb, tokens_used integer, tokens_total integer, tokens_saved integer, warnings jsonb,
       created_at timestamptz)
     ON CONFLICT (id) DO NOTHING`,
    [jsonParam(records)],
  );
}

/** The parts of a stored event an outcome needs. */
export interface SelectionEventRecord {
  id: string;
  orgId: string | null;
  workspaceId: string | null;
  contextKey: string;
  selectedToolIds: string[];
  toolsCalled: string[] | null;
  toolCallSuccess: boolean | null;
  outcome: string | null;
  outcomeAt: Date | null;
  createdAt: Date;
}

interface EventRow {
  id: string;
  org_id: string | null;
  workspace_id: string | null;
  context_key: string;
  selected_tool_ids: string[];
  tools_called: string[] | null;
  tool_call_success: boolean | null;
  outcome: string | null;
  outcome_at: unknown;
  created_at: unknown;
}

/** Reads an event; with `lock`, holds its row lock until the transaction ends. */
export async function findSelectionEvent(db: Queryable, id: string, options: { lock?: boolean } = {}): Promise<SelectionEventRecord | undefined> {
  const { rows } = await db.query<EventRow>(
    `SELECT id, org_id, workspace_id, context_key, selected_tool_ids, tools_called, tool_call_success, outcome, outcome_at, created_at
       FROM tool_selection_events WHERE id = $1${options.lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    id: row.id,
    orgId: row.org_id,
    workspaceId: row.workspace_id,
    contextKey: row.context_key,
    selectedToolIds: row.selected_tool_ids,
    toolsCalled: row.tools_called,
    toolCallSuccess: row.tool_call_success,
    outcome: row.outcome,
    outcomeAt: toDateOrNull(row.outcome_at),
    createdAt: toDate(row.created_at),
  };
}

/** Writes an event's outcome once; returns false when it already had one. */
export async function writeEventOutcome(
  db: Queryable,
  input: { id: string; toolsCalled: string[]; calledToolIds: string[]; success: boolean; outcome: string; at: Date },
): Promise<boolean> {
  const result = await db.query(
    `UPDATE tool_selection_events SET tools_called = $2, called_tool_ids = $3::uuid[], tool_call_success = $4, outcome = $5, outcome_at = $6
      WHERE id = $1 AND outcome_at IS NULL`,
    [input.id, input.toolsCalled, input.calledToolIds, input.success, input.outcome, timeParam(input.at)],
  );
  return result.affectedRows > 0;
}

/** Which events analytics read: a time window and, for non-admin callers, one organisation. */
export interface EventFilter {
  since: Date;
  until: Date;
  /** undefined: every organisation; null: events without an organisation; text: that organisation. */
  orgId?: string | null | undefined;
  /** Only events of this workspace (a tenant key's own). */
  workspaceId?: string | undefined;
  /** Heatmap: only cells of these tools (the ones a tenant key may see). */
  toolIds?: readonly string[] | undefined;
}

function eventWhere(filter: EventFilter, alias: string, params: unknown[]): string {
  params.push(timeParam(filter.since), timeParam(filter.until));
  const clauses = [`${alias}.created_at >= $${params.length - 1}`, `${alias}.created_at < $${params.length}`];
  if (filter.orgId === null) clauses.push(`${alias}.org_id IS NULL`);
  else if (filter.orgId !== undefined) {
    params.push(filter.orgId);
    clauses.push(`${alias}.org_id = $${params.length}`);
  }
  if (filter.workspaceId !== undefined) {
    params.push(filter.workspaceId);
    clauses.push(`${alias}.workspace_id = $${params.length}::uuid`);
  }
  return clauses.join(' AND ');
}

/** Seed 001 §8.4 metrics: totals, latency percentiles, method and outcome breakdowns, tokens saved. */
export interface SelectionMetricsRow {
  total: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  averageTokensSaved: number | null;
  averageSavedFraction: number | null;
  methods: Array<{ method: string; count: number }>;
  outcomes: Array<{ outcome: string; count: number }>;
}

/**
 * Aggregates the events matching `filter`. An event with no outcome counts as `pending` while
 * one may still come, and as `unreported` once it was logged before `pendingSince` (issue #26:
 * a `quiver select` or API selection whose caller never reports stayed "pending" forever).
 */
export async function selectionMetrics(db: Queryable, filter: EventFilter, pendingSince?: Date): Promise<SelectionMetricsRow> {
  const params: unknown[] = [];
  const where = eventWhere(filter, 'e', params);
  const totals = await db.query<{ total: number; p50: number | null; p95: number | null; saved: number | null; fraction: number | null }>(
    `SELECT count(*) AS total,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY e.latency_ms) AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY e.latency_ms) AS p95,
            avg(e.tokens_saved)::float8 AS saved,
            avg(CASE WHEN e.tokens_total > 0 THEN e.tokens_saved::float8 / e.tokens_total END) AS fraction
       FROM tool_selection_events e WHERE ${where}`,
    params,
  );
  const methods = await db.query<{ method: string; count: number }>(
    `SELECT e.selection_method AS method, count(*) AS count FROM tool_selection_events e WHERE ${where}
      GROUP BY e.selection_method ORDER BY count DESC, method`,
    params,
  );
  const outcomeParams = [...params, pendingSince === undefined ? null : timeParam(pendingSince)];
  const outcomes = await db.query<{ outcome: string; count: number }>(
    `SELECT COALESCE(e.outcome, CASE WHEN e.created_at < $${outcomeParams.length}::timestamptz THEN 'unreported' ELSE 'pending' END) AS outcome,
            count(*) AS count FROM tool_selection_events e WHERE ${where}
      GROUP BY 1 ORDER BY count DESC, outcome`,
    outcomeParams,
  );
  const row = totals.rows[0];
  const num = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    total: Number(row?.total ?? 0),
    latencyP50Ms: num(row?.p50),
    latencyP95Ms: num(row?.p95),
    averageTokensSaved: num(row?.saved),
    averageSavedFraction: num(row?.fraction),
    methods: methods.rows.map((r) => ({ method: r.method, count: Number(r.count) })),
    outcomes: outcomes.rows.map((r) => ({ outcome: r.outcome, count: Number(r.count) })),
  };
}

/** One heatmap cell: how often a tool was offered (and called) on a page. */
export interface HeatmapCell {
  toolId: string;
  qualifiedName: string | null;
  page: string | null;
  selected: number;
  called: number;
}

/** Tool × page × count (seed 001 §8.4), busiest cells first. */
export async function selectionHeatmap(db: Queryable, filter: EventFilter, limit: number): Promise<HeatmapCell[]> {
  const params: unknown[] = [];
  let where = eventWhere(filter, 'e', params);
  if (filter.toolIds !== undefined) {
    params.push([...filter.toolIds]);
    where += ` AND s.tool_id = ANY($${params.length}::uuid[])`;
  }
  params.push(limit);
  const { rows } = await db.query<{ tool_id: string; qualified_name: string | null; page: string | null; selected: number; called: number }>(
    `SELECT s.tool_id, CASE WHEN p.name IS NULL THEN t.name ELSE p.name || '__' || t.name END AS qualified_name,
            e.page_context AS page, count(*) AS selected,
            count(*) FILTER (WHERE s.tool_id = ANY(COALESCE(e.called_tool_ids, '{}'::uuid[]))) AS called
       FROM tool_selection_events e
       CROSS JOIN LATERAL unnest(e.selected_tool_ids) AS s(tool_id)
       LEFT JOIN tools t ON t.id = s.tool_id
       LEFT JOIN plugins p ON p.id = t.plugin_id
      WHERE ${where}
      GROUP BY s.tool_id, 2, e.page_context
      ORDER BY selected DESC, qualified_name, page NULLS FIRST
      LIMIT $${params.length}`,
    params,
  );
  return rows.map((r) => ({ toolId: r.tool_id, qualifiedName: r.qualified_name, page: r.page, selected: Number(r.selected), called: Number(r.called) }));
}

/** One day of the accuracy trend. */
export interface AccuracyDay {
  day: string;
  /** Events with an outcome. */
  outcomes: number;
  /** Of those, events where the LLM called at least one tool. */
  withCalls: number;
  /** Of those, events where a called tool was among the offered ones. */
  hits: number;
  /** hits / withCalls (null when no calls). */
  hitRate: number | null;
  /** Events whose calls succeeded / events with calls. */
  successRate: number | null;
  /** Of the events with calls, those whose first ranked (not pinned) offered tool was called (issue #13: did ranking put it first?). */
  top1: number;
  /** top1 / withCalls (null when no calls). */
  top1Rate: number | null;
  /** Mean over events with calls of 1 / (rank of the best-ranked called tool in the ranked offer), 0 when none was ranked (null when no calls). */
  mrr: number | null;
}

/** Daily hit rate, top-1 rate and MRR (seed 001 §8.4 "retrieval accuracy trend"), by the day the selection was made (UTC). */
export async function selectionAccuracy(db: Queryable, filter: EventFilter): Promise<AccuracyDay[]> {
  const params: unknown[] = [];
  const where = eventWhere(filter, 'e', params);
  const { rows } = await db.query<{ day: string; outcomes: number; with_calls: number; hits: number; successes: number; top1: number; rr_sum: number | null }>(
    `SELECT to_char(date_trunc('day', e.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
            count(*) AS outcomes,
            count(*) FILTER (WHERE cardinality(e.tools_called) > 0) AS with_calls,
            count(*) FILTER (WHERE e.called_tool_ids && e.selected_tool_ids) AS hits,
            count(*) FILTER (WHERE cardinality(e.tools_called) > 0 AND e.tool_call_success) AS successes,
            count(*) FILTER (WHERE cardinality(e.tools_called) > 0 AND r.ranked[1] = ANY (e.called_tool_ids)) AS top1,
            sum((SELECT max(1.0 / array_position(r.ranked, c)) FROM unnest(e.called_tool_ids) AS c))
              FILTER (WHERE cardinality(e.tools_called) > 0) AS rr_sum
       FROM tool_selection_events e
       -- The ranked offer: the offered tools in order without the always-pinned ones, which come
       -- first whatever the request (seed 001 §5.6) and would hide the ranking's own first place.
       CROSS JOIN LATERAL (
         SELECT ARRAY(SELECT u.id FROM unnest(e.selected_tool_ids) WITH ORDINALITY AS u(id, n)
                       WHERE NOT EXISTS (SELECT 1 FROM tools t WHERE t.id = u.id AND t.is_always_pinned)
                       ORDER BY u.n) AS ranked
       ) r
      WHERE ${where} AND e.outcome_at IS NOT NULL
      GROUP BY 1 ORDER BY 1`,
    params,
  );
  return rows.map((r) => {
    const withCalls = Number(r.with_calls);
    return {
      day: r.day,
      outcomes: Number(r.outcomes),
      withCalls,
      hits: Number(r.hits),
      hitRate: withCalls === 0 ? null : Number(r.hits) / withCalls,
      successRate: withCalls === 0 ? null : Number(r.successes) / withCalls,
      top1: Number(r.top1),
      top1Rate: withCalls === 0 ? null : Number(r.top1) / withCalls,
      // A called tool that was not offered has no rank: the sum skips it (max over nothing is NULL).
      mrr: withCalls === 0 ? null : Number(r.rr_sum ?? 0) / withCalls,
    };
  });
}

/** A tool whose embedding is missing, stale or old (seed 001 §8.6). */
export interface DriftRow {
  id: string;
  qualifiedName: string;
  embeddingStatus: string;
  lastEmbeddedAt: Date | null;
  daysSinceEmbed: number;
}

/** Seed 001 §8.6 drift query: active tools not `current` or embedded more than `maxAgeDays` before `now`. */
export async function embeddingDrift(
  db: Queryable,
  input: { now: Date; maxAgeDays: number; orgId?: string | null | undefined; limit: number; toolIds?: readonly string[] | undefined },
): Promise<DriftRow[]> {
  const params: unknown[] = [timeParam(input.now), input.maxAgeDays, input.limit];
  let orgClause = '';
  if (input.orgId === null) orgClause = 'AND t.org_id IS NULL';
  else if (input.orgId !== undefined) {
    params.push(input.orgId);
    orgClause = `AND (t.org_id IS NULL OR t.org_id = $${params.length})`;
  }
  // A tenant's drift lists only the tools it may see (visibility rules and enablement included).
  if (input.toolIds !== undefined) {
    params.push([...input.toolIds]);
    orgClause += ` AND t.id = ANY($${params.length}::uuid[])`;
  }
  const { rows } = await db.query<{ id: string; qualified_name: string; embedding_status: string; last_embedded_at: unknown; days: number }>(
    `SELECT t.id, CASE WHEN p.name IS NULL THEN t.name ELSE p.name || '__' || t.name END AS qualified_name,
            t.embedding_status, t.last_embedded_at,
            EXTRACT(EPOCH FROM ($1::timestamptz - COALESCE(t.last_embedded_at, '1970-01-01'::timestamptz)))::float8 / 86400.0 AS days
       FROM tools t LEFT JOIN plugins p ON p.id = t.plugin_id
      WHERE t.deleted_at IS NULL AND t.status = 'active' ${orgClause}
        AND (t.embedding_status <> 'current' OR t.last_embedded_at IS NULL
             OR t.last_embedded_at < $1::timestamptz - make_interval(days => $2::int))
      ORDER BY days DESC, qualified_name
      LIMIT $3`,
    params,
  );
  return rows.map((r) => ({
    id: r.id,
    qualifiedName: r.qualified_name,
    embeddingStatus: r.embedding_status,
    lastEmbeddedAt: toDateOrNull(r.last_embedded_at),
    daysSinceEmbed: Number(r.days),
  }));
}
