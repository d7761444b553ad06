/**
 * @module rollouts/repository
 * SQL of deployments, rollouts and their history (migration 0060), snake_case at this boundary
 * only. Every statement is one round trip and behaves alike on PGlite and PostgreSQL; the
 * decider lease is one conditional UPDATE, so exactly one replica moves a running rollout.
 */
import type { Queryable } from '../store/database.ts';
import { isUuid, jsonParam, timeParam, toDate, toDateOrNull } from '../store/repositories/mapping.ts';
import type { StagedVersion } from '../plugins/service.ts';
import type { Deployment, DeploymentStatus, RoutableSurface, Rollout, RolloutEvent, RolloutStatus, Slot, SlotStats } from './types.ts';

type Row = Record<string, unknown>;

function deploymentOf(row: Row): Deployment {
  return {
    id: String(row['id']),
    pluginId: String(row['plugin_id']),
    version: String(row['version']),
    slot: row['slot'] as Slot,
    status: row['status'] as DeploymentStatus,
    trafficPercent: Number(row['traffic_percent']),
    healthScore: row['health_score'] === null ? null : Number(row['health_score']),
    executionMode: (row['execution_mode'] as string | null) ?? null,
    runtimeVersion: String(row['runtime_version']),
    requestedRef: (row['requested_ref'] as string | null) ?? null,
    install: (row['install'] as StagedVersion | null) ?? null,
    routableTools: ((row['routable_tools'] as string[] | null) ?? []).map(String),
    routableSurface: surfaceOf(row['routable_surface']),
    folder: (row['folder'] as string | null) ?? null,
    createdAt: toDate(row['created_at']),
    updatedAt: toDate(row['updated_at']),
  };
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

function surfaceOf(value: unknown): RoutableSurface {
  const surface = (value ?? {}) as Record<string, unknown>;
  return { resources: strings(surface['resources']), templates: strings(surface['templates']), prompts: strings(surface['prompts']) };
}

function rolloutOf(row: Row): Rollout {
  return {
    id: String(row['id']),
    pluginId: String(row['plugin_id']),
    fromDeployment: String(row['from_deployment']),
    toDeployment: String(row['to_deployment']),
    status: row['status'] as RolloutStatus,
    steps: (row['steps'] as number[]).map(Number),
    step: Number(row['step']),
    stepStartedAt: toDate(row['step_started_at']),
    stepWindowMs: Number(row['step_window_ms']),
    reason: (row['reason'] as string | null) ?? null,
    createdAt: toDate(row['created_at']),
    updatedAt: toDate(row['updated_at']),
    finishedAt: toDateOrNull(row['finished_at']),
  };
}

function eventOf(row: Row): RolloutEvent {
  return {
    id: String(row['id']),
    rolloutId: String(row['rollout_id']),
    pluginId: String(row['plugin_id']),
    kind: row['kind'] as RolloutEvent['kind'],
    message: String(row['message']),
    details: (row['details'] as Record<string, unknown>) ?? {},
    createdAt: toDate(row['created_at']),
  };
}

/** Both slots of a plugin. */
export async function deploymentsOf(db: Queryable, pluginId: string): Promise<Deployment[]> {
  const { rows } = await db.query<Row>('SELECT * FROM deployments WHERE plugin_id = $1 ORDER BY slot', [pluginId]);
  return rows.map(deploymentOf);
}

/** A deployment by id. */
export async function findDeployment(db: Queryable, id: string): Promise<Deployment | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.query<Row>('SELECT * FROM deployments WHERE id = $1', [id]);
  return rows[0] === undefined ? undefined : deploymentOf(rows[0]);
}

/** What a slot is written with. */
export interface DeploymentWrite {
  pluginId: string;
  slot: Slot;
  version: string;
  status: DeploymentStatus;
  trafficPercent: number;
  runtimeVersion: string;
  executionMode: string | null;
  requestedRef: string | null;
  install: StagedVersion | null;
  routableTools: string[];
  /** The install folder the slot runs from (null: in place or remote). */
  folder: string | null;
}

/** Writes a slot (a new version replaces whatever the slot held). */
export async function upsertDeployment(db: Queryable, write: DeploymentWrite, at: Date): Promise<Deployment> {
  const { rows } = await db.query<Row>(
    `INSERT INTO deployments (plugin_id, slot, version, status, traffic_percent, runtime_version, execution_mode, requested_ref, install, routable_tools, folder, routable_surface, health_score, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $11::jsonb, $12, '{}'::jsonb, NULL, $10::timestamptz, $10::timestamptz)
     ON CONFLICT (plugin_id, slot) DO UPDATE SET version = EXCLUDED.version, status = EXCLUDED.status,
       traffic_percent = EXCLUDED.traffic_percent, runtime_version = EXCLUDED.runtime_version,
       execution_mode = EXCLUDED.execution_mode, requested_ref = EXCLUDED.requested_ref, install = EXCLUDED.install,
       routable_tools = EXCLUDED.routable_tools, folder = EXCLUDED.folder, routable_surface = EXCLUDED.routable_surface,
       health_score = NULL, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
     RETURNING *`,
    [
      write.pluginId,
      write.slot,
      write.version,
      write.status,
      write.trafficPercent,
      write.runtimeVersion,
      write.executionMode,
      write.requestedRef,
      write.install === null ? null : jsonParam(write.install),
      timeParam(at),
      jsonParam(write.routableTools),
      write.folder,
    ],
  );
  return deploymentOf(rows[0]!);
}

/** Sets a slot's status and traffic share (and, on promotion, the runtime version it now runs as). */
export async function setDeploymentState(db: Queryable, id: string, status: DeploymentStatus, trafficPercent: number, at: Date, runtimeVersion?: string): Promise<void> {
  await db.query('UPDATE deployments SET status = $2, traffic_percent = $3, updated_at = $4::timestamptz, runtime_version = COALESCE($5, runtime_version) WHERE id = $1', [
    id,
    status,
    trafficPercent,
    timeParam(at),
    runtimeVersion ?? null,
  ]);
}

/** Stores what else than tools a canary may serve (known once its process answered, issue #29). */
export async function setRoutableSurface(db: Queryable, id: string, surface: RoutableSurface): Promise<void> {
  await db.query('UPDATE deployments SET routable_surface = $2::jsonb WHERE id = $1', [id, jsonParam(surface)]);
}

/** Deletes every slot of a plugin; its rollouts and their history go with them (ON DELETE CASCADE). */
export async function deleteDeploymentsOf(db: Queryable, pluginId: string): Promise<void> {
  await db.query('DELETE FROM deployments WHERE plugin_id = $1', [pluginId]);
}

/** Stores a slot's latest health score (0–100). */
export async function setDeploymentHealth(db: Queryable, id: string, score: number): Promise<void> {
  await db.query('UPDATE deployments SET health_score = $2 WHERE id = $1', [id, Math.max(0, Math.min(100, Math.round(score)))]);
}

/** Starts a rollout (the partial unique index refuses a second open one for the plugin). */
export async function insertRollout(
  db: Queryable,
  input: { pluginId: string; from: string; to: string; steps: readonly number[]; stepWindowMs: number; status: 'running' | 'verifying' },
  at: Date,
): Promise<Rollout> {
  const { rows } = await db.query<Row>(
    `INSERT INTO plugin_rollouts (plugin_id, from_deployment, to_deployment, status, steps, step, step_started_at, step_window_ms, created_at, updated_at)
     VALUES ($1, $2, $3, $7, $4::jsonb, 0, $5::timestamptz, $6, $5::timestamptz, $5::timestamptz) RETURNING *`,
    [input.pluginId, input.from, input.to, jsonParam(input.steps), timeParam(at), input.stepWindowMs, input.status],
  );
  return rolloutOf(rows[0]!);
}

/** The open (verifying, running or paused) rollout of a plugin. */
export async function openRolloutOf(db: Queryable, pluginId: string): Promise<Rollout | undefined> {
  const { rows } = await db.query<Row>(`SELECT * FROM plugin_rollouts WHERE plugin_id = $1 AND status IN ('verifying', 'running', 'paused')`, [pluginId]);
  return rows[0] === undefined ? undefined : rolloutOf(rows[0]);
}

/** The latest rollout of a plugin, whatever its status. */
export async function latestRolloutOf(db: Queryable, pluginId: string): Promise<Rollout | undefined> {
  const { rows } = await db.query<Row>('SELECT * FROM plugin_rollouts WHERE plugin_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1', [pluginId]);
  return rows[0] === undefined ? undefined : rolloutOf(rows[0]);
}

/** Every open rollout (what the router serves and the decider judges; a verifying one's canary has 0 %). */
export async function openRollouts(db: Queryable): Promise<Rollout[]> {
  const { rows } = await db.query<Row>(`SELECT * FROM plugin_rollouts WHERE status IN ('verifying', 'running', 'paused') ORDER BY created_at`);
  return rows.map(rolloutOf);
}

/**
 * Takes (or renews) the decider lease of a running or paused rollout (a paused one is still
 * judged for degradation): true when this owner now holds it.
 * The database's clock measures the lease, so replicas with skewed clocks still agree.
 */
export async function claimDecider(db: Queryable, rolloutId: string, owner: string, leaseMs: number): Promise<boolean> {
  const result = await db.query(
    `UPDATE plugin_rollouts SET decider = $2, decider_until = now() + ($3::double precision * interval '1 millisecond')
      WHERE id = $1 AND status IN ('running', 'paused') AND (decider IS NULL OR decider = $2 OR decider_until < now())`,
    [rolloutId, owner, leaseMs],
  );
  return result.affectedRows > 0;
}

/** Moves a rollout if it is still in `expected` (a lost race changes nothing): true when it moved. */
export async function updateRollout(
  db: Queryable,
  id: string,
  expected: readonly RolloutStatus[],
  change: { status?: RolloutStatus; step?: number; stepStartedAt?: Date; reason?: string | null; finished?: boolean },
  at: Date,
): Promise<Rollout | undefined> {
  const { rows } = await db.query<Row>(
    `UPDATE plugin_rollouts SET status = COALESCE($3, status), step = COALESCE($4, step),
        step_started_at = COALESCE($5::timestamptz, step_started_at), reason = CASE WHEN $6::boolean THEN $7 ELSE reason END,
        finished_at = CASE WHEN $8::boolean THEN $9::timestamptz ELSE finished_at END, updated_at = $9::timestamptz
      WHERE id = $1 AND status IN (SELECT jsonb_array_elements_text($2::jsonb)) RETURNING *`,
    [
      id,
      jsonParam(expected),
      change.status ?? null,
      change.step ?? null,
      change.stepStartedAt === undefined ? null : timeParam(change.stepStartedAt),
      change.reason !== undefined,
      change.reason ?? null,
      change.finished === true,
      timeParam(at),
    ],
  );
  return rows[0] === undefined ? undefined : rolloutOf(rows[0]);
}

/** Appends a history line. */
export async function insertRolloutEvent(db: Queryable, event: Pick<RolloutEvent, 'rolloutId' | 'pluginId' | 'kind' | 'message' | 'details'>, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO plugin_rollout_events (rollout_id, plugin_id, kind, message, details, created_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6::timestamptz)`,
    [event.rolloutId, event.pluginId, event.kind, event.message, jsonParam(event.details), timeParam(at)],
  );
}

/** A plugin's rollout history, newest first. */
export async function rolloutEventsOf(db: Queryable, pluginId: string, limit: number): Promise<RolloutEvent[]> {
  const { rows } = await db.query<Row>('SELECT * FROM plugin_rollout_events WHERE plugin_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [pluginId, limit]);
  return rows.map(eventOf);
}

/** How many rollouts of this plugin rolled back a deployment of `version`. */
export async function rollbacksOfVersion(db: Queryable, pluginId: string, version: string): Promise<number> {
  const { rows } = await db.query<{ n: number | string }>(
    // The version each rollout brought is in its `started` line: a slot's row holds only its latest version.
    `SELECT count(*) AS n FROM plugin_rollouts r JOIN plugin_rollout_events e ON e.rollout_id = r.id AND e.kind = 'started'
      WHERE r.plugin_id = $1 AND r.status = 'rolled_back' AND e.details->>'to' = $2`,
    [pluginId, version],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Calls one runtime version of a plugin served since `since` (the slot's health window). */
export async function slotStats(db: Queryable, pluginId: string, runtimeVersion: string, since: Date): Promise<SlotStats> {
  const { rows } = await db.query<Row>(
    `SELECT count(*) AS calls,
            count(*) FILTER (WHERE outcome <> 'success') AS failures,
            count(*) FILTER (WHERE error_class = 'circuit_open') AS breaker_open,
            count(*) FILTER (WHERE error_class = 'unavailable') AS crashes,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE outcome <> 'rejected') AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE outcome <> 'rejected') AS p95
       FROM plugin_call_events WHERE plugin_id = $1 AND version = $2 AND created_at >= $3::timestamptz`,
    [pluginId, runtimeVersion, timeParam(since)],
  );
  const row = rows[0] ?? {};
  const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    calls: Number(row['calls'] ?? 0),
    failures: Number(row['failures'] ?? 0),
    breakerOpen: Number(row['breaker_open'] ?? 0),
    crashes: Number(row['crashes'] ?? 0),
    p50Ms: numberOrNull(row['p50']),
    p95Ms: numberOrNull(row['p95']),
  };
}

/** A rollout by id. */
export async function findRollout(db: Queryable, id: string): Promise<Rollout | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.query<Row>('SELECT * FROM plugin_rollouts WHERE id = $1', [id]);
  return rows[0] === undefined ? undefined : rolloutOf(rows[0]);
}

/** The latest job of `kind` with `dedupeKey` that failed for good (no attempts left), if any. */
export async function failedJob(db: Queryable, kind: string, dedupeKey: string): Promise<{ attempts: number; lastError: string | null } | undefined> {
  const { rows } = await db.query<Row>(`SELECT attempts, last_error FROM jobs WHERE kind = $1 AND dedupe_key = $2 AND status = 'failed' ORDER BY created_at DESC LIMIT 1`, [kind, dedupeKey]);
  const row = rows[0];
  return row === undefined ? undefined : { attempts: Number(row['attempts']), lastError: (row['last_error'] as string | null) ?? null };
}
