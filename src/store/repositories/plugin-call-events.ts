/**
 * @module store/repositories/plugin-call-events
 * Plugin call events (runtime issue "Health", DESIGN §3.6): one row per upstream tool call,
 * written in batches by the runtime's call-event recorder and aggregated per plugin and per
 * tool over a time window (calls, outcomes, error classes, latency percentiles).
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDateOrNull } from './mapping.ts';

/** Outcomes a call event may have (the CHECK of migration 0041). */
export type CallEventOutcome = 'success' | 'error' | 'timeout' | 'rejected';

/** One call event to store. */
export interface PluginCallEventWrite {
  pluginId: string;
  pluginName: string;
  toolName: string;
  latencyMs: number;
  outcome: CallEventOutcome;
  errorClass: string | null;
  sessionId: string | null;
  /** The runtime version (blue-green slot) that served the call (migration 0060; issue #11). */
  version?: string | null;
  createdAt: Date;
}

/**
 * Inserts events in one statement and returns how many were stored. Events of plugins that
 * no longer exist (removed while their calls were queued) are skipped rather than failing the
 * batch on the foreign key.
 */
export async function insertPluginCallEvents(db: Queryable, events: readonly PluginCallEventWrite[]): Promise<number> {
  if (events.length === 0) return 0;
  const records = events.map((e) => ({
    plugin_id: e.pluginId,
    plugin_name: e.pluginName,
    tool_name: e.toolName,
    latency_ms: Math.max(0, e.latencyMs),
    outcome: e.outcome,
    error_class: e.errorClass,
    session_id: e.sessionId,
    version: e.version ?? null,
    created_at: timeParam(e.createdAt),
  }));
  const result = await db.query(
    `INSERT INTO plugin_call_events (plugin_id, plugin_name, tool_name, latency_ms, outcome, error_class, session_id, version, created_at)
     SELECT x.plugin_id, x.plugin_name, x.tool_name, x.latency_ms, x.outcome, x.error_class, x.session_id, x.version, x.created_at
       FROM jsonb_to_recordset($1::jsonb) AS x(plugin_id uuid, plugin_name text, tool_name text, latency_ms double precision,
            outcome text, error_class text, session_id text, version text, created_at timestamptz)
       JOIN plugins p ON p.id = x.plugin_id`,
    [jsonParam(records)],
  );
  return result.affectedRows;
}

/** Aggregates of a set of calls (one plugin, or one tool of a plugin). */
export interface CallAggregates {
  calls: number;
  successes: number;
  /** Outcome `error` (tool errors, crashes, protocol errors). */
  errors: number;
  timeouts: number;
  /** Refused before reaching the plugin (open breaker, rate limit, crash loop, full queue). */
  rejected: number;
  /** Every non-success call by its error class (`unknown` when none was given). */
  errorClasses: Record<string, number>;
  /** percentile_cont over every call's latency (null when there were none). */
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  lastCallAt: Date | null;
}

/** Aggregates of one plugin. */
export interface PluginCallAggregates extends CallAggregates {
  pluginId: string;
  pluginName: string;
}

/** Aggregates of one tool of a plugin. */
export interface ToolCallAggregates extends CallAggregates {
  toolName: string;
}

interface AggregateRow {
  calls: number;
  successes: number;
  errors: number;
  timeouts: number;
  rejected: number;
  p50: number | null;
  p95: number | null;
  last_call_at: unknown;
}

const AGGREGATES = `count(*) AS calls,
            count(*) FILTER (WHERE e.outcome = 'success') AS successes,
            count(*) FILTER (WHERE e.outcome = 'error') AS errors,
            count(*) FILTER (WHERE e.outcome = 'timeout') AS timeouts,
            count(*) FILTER (WHERE e.outcome = 'rejected') AS rejected,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY e.latency_ms) AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY e.latency_ms) AS p95,
            max(e.created_at) AS last_call_at`;

function aggregatesOf(row: AggregateRow, errorClasses: Record<string, number> | undefined): CallAggregates {
  const num = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    calls: Number(row.calls),
    successes: Number(row.successes),
    errors: Number(row.errors),
    timeouts: Number(row.timeouts),
    rejected: Number(row.rejected),
    errorClasses: errorClasses ?? {},
    p50LatencyMs: num(row.p50),
    p95LatencyMs: num(row.p95),
    lastCallAt: toDateOrNull(row.last_call_at),
  };
}

/** Which events an aggregate reads: `[since, until)` and optionally some plugins only. */
export interface CallEventWindow {
  since: Date;
  until: Date;
  /** Plugin ids to include (undefined: every plugin). */
  pluginIds?: readonly string[] | undefined;
}

function windowWhere(window: CallEventWindow, params: unknown[]): string {
  params.push(timeParam(window.since), timeParam(window.until));
  const clauses = [`e.created_at >= $${params.length - 1}::timestamptz`, `e.created_at < $${params.length}::timestamptz`];
  if (window.pluginIds !== undefined) {
    params.push([...window.pluginIds]);
    clauses.push(`e.plugin_id = ANY($${params.length}::uuid[])`);
  }
  return clauses.join(' AND ');
}

/** Per-plugin aggregates over the window, for plugins with at least one call in it. */
export async function pluginCallAggregates(db: Queryable, window: CallEventWindow): Promise<PluginCallAggregates[]> {
  if (window.pluginIds !== undefined && window.pluginIds.length === 0) return [];
  const params: unknown[] = [];
  const where = windowWhere(window, params);
  const totals = await db.query<AggregateRow & { plugin_id: string; plugin_name: string }>(
    `SELECT e.plugin_id, max(e.plugin_name) AS plugin_name, ${AGGREGATES}
       FROM plugin_call_events e WHERE ${where}
      GROUP BY e.plugin_id ORDER BY plugin_name`,
    params,
  );
  const classes = await db.query<{ plugin_id: string; error_class: string; count: number }>(
    `SELECT e.plugin_id, COALESCE(e.error_class, 'unknown') AS error_class, count(*) AS count
       FROM plugin_call_events e WHERE ${where} AND e.outcome <> 'success'
      GROUP BY 1, 2 ORDER BY 1, count DESC, 2`,
    params,
  );
  const byPlugin = new Map<string, Record<string, number>>();
  for (const row of classes.rows) {
    const map = byPlugin.get(row.plugin_id) ?? {};
    map[row.error_class] = Number(row.count);
    byPlugin.set(row.plugin_id, map);
  }
  return totals.rows.map((row) => ({ pluginId: row.plugin_id, pluginName: row.plugin_name, ...aggregatesOf(row, byPlugin.get(row.plugin_id)) }));
}

/** Per-tool aggregates of one plugin over the window, busiest tool first. */
export async function toolCallAggregates(db: Queryable, pluginId: string, window: Omit<CallEventWindow, 'pluginIds'>): Promise<ToolCallAggregates[]> {
  const params: unknown[] = [];
  const where = windowWhere({ ...window, pluginIds: [pluginId] }, params);
  const totals = await db.query<AggregateRow & { tool_name: string }>(
    `SELECT e.tool_name, ${AGGREGATES}
       FROM plugin_call_events e WHERE ${where}
      GROUP BY e.tool_name ORDER BY calls DESC, e.tool_name`,
    params,
  );
  const classes = await db.query<{ tool_name: string; error_class: string; count: number }>(
    `SELECT e.tool_name, COALESCE(e.error_class, 'unknown') AS error_class, count(*) AS count
       FROM plugin_call_events e WHERE ${where} AND e.outcome <> 'success'
      GROUP BY 1, 2 ORDER BY 1, count DESC, 2`,
    params,
  );
  const byTool = new Map<string, Record<string, number>>();
  for (const row of classes.rows) {
    const map = byTool.get(row.tool_name) ?? {};
    map[row.error_class] = Number(row.count);
    byTool.set(row.tool_name, map);
  }
  return totals.rows.map((row) => ({ toolName: row.tool_name, ...aggregatesOf(row, byTool.get(row.tool_name)) }));
}

/** Deletes call events older than `before`; returns how many went. */
export async function deletePluginCallEventsBefore(db: Queryable, before: Date): Promise<number> {
  const result = await db.query('DELETE FROM plugin_call_events WHERE created_at < $1', [before.toISOString()]);
  return result.affectedRows;
}
