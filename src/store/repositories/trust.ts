/**
 * @module store/repositories/trust
 * Admin trust grants (history), egress rules, the egress decision log, user reports and the
 * runtime trust score of plugins (migration 0051, issue #10).
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDate } from './mapping.ts';

export type TrustGrantKind = 'grant' | 'cap' | 'clear';

/** One grant, cap or clear, as recorded. */
export interface TrustGrantRow {
  id: number;
  pluginId: string;
  kind: TrustGrantKind;
  level: string | null;
  reason: string;
  actor: string;
  createdAt: Date;
}

export interface EgressRuleRow {
  pluginId: string;
  host: string;
  port: number;
  reason: string;
  actor: string;
  createdAt: Date;
}

export interface EgressDecisionRow {
  pluginId: string;
  host: string;
  port: number;
  allowed: boolean;
  createdAt: Date;
}

export interface UserReportRow {
  id: string;
  pluginId: string;
  reason: string;
  actor: string;
  createdAt: Date;
}

export interface RuntimeTrustRow {
  pluginId: string;
  score: number;
  belowThreshold: boolean;
  factors: Record<string, unknown>;
  computedAt: Date;
}

/** Call statistics of one plugin over a window, for the runtime score. */
export interface RuntimeCallStats {
  pluginId: string;
  calls: number;
  /** Outcomes `error` and `timeout` (refusals by Quiver's own limits are not the plugin's fault). */
  failures: number;
  meanLatencyMs: number;
  stddevLatencyMs: number;
}

export async function insertTrustGrant(db: Queryable, row: Omit<TrustGrantRow, 'id'>): Promise<TrustGrantRow> {
  const { rows } = await db.query<{ id: number }>(
    'INSERT INTO plugin_trust_grants (plugin_id, kind, level, reason, actor, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
    [row.pluginId, row.kind, row.level, row.reason, row.actor, timeParam(row.createdAt)],
  );
  return { ...row, id: Number(rows[0]!.id) };
}

interface GrantRow {
  id: number;
  plugin_id: string;
  kind: TrustGrantKind;
  level: string | null;
  reason: string;
  actor: string;
  created_at: unknown;
}

const toGrant = (row: GrantRow): TrustGrantRow => ({
  id: Number(row.id), pluginId: row.plugin_id, kind: row.kind, level: row.level, reason: row.reason, actor: row.actor, createdAt: toDate(row.created_at),
});

/** A plugin's grants, newest first. */
export async function listTrustGrants(db: Queryable, pluginId: string, limit = 50): Promise<TrustGrantRow[]> {
  const { rows } = await db.query<GrantRow>('SELECT * FROM plugin_trust_grants WHERE plugin_id = $1 ORDER BY id DESC LIMIT $2', [pluginId, limit]);
  return rows.map(toGrant);
}

/** The grant in force of each plugin (the newest row, unless it is a clear). */
export async function currentTrustGrants(db: Queryable, pluginIds?: readonly string[]): Promise<Map<string, TrustGrantRow>> {
  const params: unknown[] = [];
  const filter = pluginIds === undefined ? '' : 'WHERE plugin_id = ANY($1::uuid[])';
  if (pluginIds !== undefined) params.push([...pluginIds]);
  const { rows } = await db.query<GrantRow>(
    `SELECT DISTINCT ON (plugin_id) * FROM plugin_trust_grants ${filter} ORDER BY plugin_id, id DESC`,
    params,
  );
  return new Map(rows.filter((row) => row.kind !== 'clear').map((row) => [row.plugin_id, toGrant(row)]));
}

/** Adds (or re-states, keeping the first record's who and when) an egress rule; true when new. */
export async function insertEgressRule(db: Queryable, row: EgressRuleRow): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO plugin_egress_rules (plugin_id, host, port, reason, actor, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (plugin_id, host, port) DO NOTHING`,
    [row.pluginId, row.host, row.port, row.reason, row.actor, timeParam(row.createdAt)],
  );
  return result.affectedRows > 0;
}

export async function deleteEgressRule(db: Queryable, pluginId: string, host: string, port: number): Promise<boolean> {
  const result = await db.query('DELETE FROM plugin_egress_rules WHERE plugin_id = $1 AND host = $2 AND port = $3', [pluginId, host, port]);
  return result.affectedRows > 0;
}

export async function listEgressRules(db: Queryable, pluginId: string): Promise<EgressRuleRow[]> {
  const { rows } = await db.query<{ plugin_id: string; host: string; port: number; reason: string; actor: string; created_at: unknown }>(
    'SELECT * FROM plugin_egress_rules WHERE plugin_id = $1 ORDER BY host, port',
    [pluginId],
  );
  return rows.map((row) => ({ pluginId: row.plugin_id, host: row.host, port: Number(row.port), reason: row.reason, actor: row.actor, createdAt: toDate(row.created_at) }));
}

/** Stores decisions in one statement; decisions of plugins that no longer exist are dropped. */
export async function insertEgressDecisions(db: Queryable, decisions: readonly EgressDecisionRow[]): Promise<number> {
  if (decisions.length === 0) return 0;
  const records = decisions.map((d) => ({ plugin_id: d.pluginId, host: d.host.slice(0, 253), port: d.port, allowed: d.allowed, created_at: timeParam(d.createdAt) }));
  const result = await db.query(
    `INSERT INTO plugin_egress_decisions (plugin_id, host, port, allowed, created_at)
     SELECT x.plugin_id, x.host, x.port, x.allowed, x.created_at
       FROM jsonb_to_recordset($1::jsonb) AS x(plugin_id uuid, host text, port integer, allowed boolean, created_at timestamptz)
       JOIN plugins p ON p.id = x.plugin_id`,
    [jsonParam(records)],
  );
  return result.affectedRows;
}

export async function listEgressDecisions(db: Queryable, pluginId: string, limit: number): Promise<EgressDecisionRow[]> {
  const { rows } = await db.query<{ plugin_id: string; host: string; port: number; allowed: boolean; created_at: unknown }>(
    'SELECT plugin_id, host, port, allowed, created_at FROM plugin_egress_decisions WHERE plugin_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
    [pluginId, limit],
  );
  return rows.map((row) => ({ pluginId: row.plugin_id, host: row.host, port: Number(row.port), allowed: row.allowed, createdAt: toDate(row.created_at) }));
}

export async function deleteEgressDecisionsBefore(db: Queryable, before: Date): Promise<number> {
  const result = await db.query('DELETE FROM plugin_egress_decisions WHERE created_at < $1::timestamptz', [timeParam(before)]);
  return result.affectedRows;
}

/** Denied egress decisions since `since`, per plugin and target (dynamic trust weighs internal targets apart). */
export async function deniedEgressTargets(db: Queryable, since: Date): Promise<Array<{ pluginId: string; host: string; port: number; count: number }>> {
  const { rows } = await db.query<{ plugin_id: string; host: string; port: number; count: number }>(
    'SELECT plugin_id, host, port, count(*) AS count FROM plugin_egress_decisions WHERE NOT allowed AND created_at >= $1::timestamptz GROUP BY plugin_id, host, port',
    [timeParam(since)],
  );
  return rows.map((row) => ({ pluginId: row.plugin_id, host: row.host, port: Number(row.port), count: Number(row.count) }));
}

/** Denied egress decisions per plugin since `since`. */
export async function deniedEgressCounts(db: Queryable, since: Date): Promise<Map<string, number>> {
  const { rows } = await db.query<{ plugin_id: string; count: number }>(
    'SELECT plugin_id, count(*) AS count FROM plugin_egress_decisions WHERE NOT allowed AND created_at >= $1::timestamptz GROUP BY plugin_id',
    [timeParam(since)],
  );
  return new Map(rows.map((row) => [row.plugin_id, Number(row.count)]));
}

export async function insertUserReport(db: Queryable, row: Omit<UserReportRow, 'id'>): Promise<UserReportRow> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO plugin_user_reports (plugin_id, reason, actor, created_at) VALUES ($1, $2, $3, $4) RETURNING id',
    [row.pluginId, row.reason, row.actor, timeParam(row.createdAt)],
  );
  return { ...row, id: rows[0]!.id };
}

/** User reports per plugin since `since`. */
export async function userReportCounts(db: Queryable, since: Date): Promise<Map<string, number>> {
  const { rows } = await db.query<{ plugin_id: string; count: number }>(
    'SELECT plugin_id, count(*) AS count FROM plugin_user_reports WHERE created_at >= $1::timestamptz GROUP BY plugin_id',
    [timeParam(since)],
  );
  return new Map(rows.map((row) => [row.plugin_id, Number(row.count)]));
}

/** Per-plugin call statistics over `[since, until)`. */
export async function runtimeCallStats(db: Queryable, since: Date, until: Date): Promise<RuntimeCallStats[]> {
  const { rows } = await db.query<{ plugin_id: string; calls: number; failures: number; mean: number | null; stddev: number | null }>(
    `SELECT plugin_id, count(*) AS calls,
            count(*) FILTER (WHERE outcome IN ('error', 'timeout')) AS failures,
            avg(latency_ms) AS mean, stddev_pop(latency_ms) AS stddev
       FROM plugin_call_events
      WHERE created_at >= $1::timestamptz AND created_at < $2::timestamptz AND outcome <> 'rejected'
      GROUP BY plugin_id`,
    [timeParam(since), timeParam(until)],
  );
  return rows.map((row) => ({
    pluginId: row.plugin_id, calls: Number(row.calls), failures: Number(row.failures), meanLatencyMs: Number(row.mean ?? 0), stddevLatencyMs: Number(row.stddev ?? 0),
  }));
}

export async function upsertRuntimeTrust(db: Queryable, row: RuntimeTrustRow): Promise<void> {
  await db.query(
    `INSERT INTO plugin_runtime_trust (plugin_id, score, below_threshold, factors, computed_at) VALUES ($1, $2, $3, $4::jsonb, $5)
     ON CONFLICT (plugin_id) DO UPDATE SET score = EXCLUDED.score, below_threshold = EXCLUDED.below_threshold, factors = EXCLUDED.factors, computed_at = EXCLUDED.computed_at`,
    [row.pluginId, row.score, row.belowThreshold, jsonParam(row.factors), timeParam(row.computedAt)],
  );
}

export async function listRuntimeTrust(db: Queryable, pluginIds?: readonly string[]): Promise<Map<string, RuntimeTrustRow>> {
  const params: unknown[] = [];
  const filter = pluginIds === undefined ? '' : 'WHERE plugin_id = ANY($1::uuid[])';
  if (pluginIds !== undefined) params.push([...pluginIds]);
  const { rows } = await db.query<{ plugin_id: string; score: number; below_threshold: boolean; factors: unknown; computed_at: unknown }>(
    `SELECT * FROM plugin_runtime_trust ${filter}`,
    params,
  );
  return new Map(rows.map((row) => [row.plugin_id, {
    pluginId: row.plugin_id,
    score: Number(row.score),
    belowThreshold: row.below_threshold,
    factors: (typeof row.factors === 'string' ? JSON.parse(row.factors) : row.factors) as Record<string, unknown>,
    computedAt: toDate(row.computed_at),
  }]));
}
