/**
 * @module sessions/repository
 * SQL of the `mcp_sessions` table (migration 0064). Each function is one statement (or one
 * transaction), the same on PGlite and PostgreSQL. Expiry is measured by the database clock,
 * so replicas with drifting clocks agree on which sessions are live.
 */
import type { Queryable } from '../store/database.ts';

/** Who a stored session counts against for the per-tenant limits. */
export interface StoredSessionOwner {
  key: string;
  org: string | null;
}

/** A stored session row. */
export interface StoredSession {
  id: string;
  identity: Record<string, unknown>;
  /** Canonical JSON of the identity: a request is served only when its key resolves to the same. */
  identityKey: string;
  owner: StoredSessionOwner;
  protocolVersion: string | null;
  /** What the client declared at initialize: `capabilities` and `clientInfo`. */
  client: Record<string, unknown>;
  /** The gateway's session state (opaque here). */
  state: Record<string, unknown>;
  /** Per-session values of other parts (log level, subscriptions, the rollout slot), by name. */
  extensions: Record<string, unknown>;
  version: number;
  lastSeenAt: Date;
  expiresAt: Date;
}

/** A new session's row. */
export type NewStoredSession = Omit<StoredSession, 'version' | 'lastSeenAt' | 'expiresAt'>;

interface SessionRow {
  id: string;
  identity: Record<string, unknown>;
  identity_key: string;
  owner_key: string;
  owner_org: string | null;
  protocol_version: string | null;
  client: Record<string, unknown>;
  state: Record<string, unknown>;
  extensions: Record<string, unknown>;
  version: string | number;
  last_seen_at: Date;
  expires_at: Date;
}

const COLUMNS = 'id, identity, identity_key, owner_key, owner_org, protocol_version, client, state, extensions, version, last_seen_at, expires_at';

function toSession(row: SessionRow): StoredSession {
  return {
    id: row.id,
    identity: row.identity,
    identityKey: row.identity_key,
    owner: { key: row.owner_key, org: row.owner_org },
    protocolVersion: row.protocol_version,
    client: row.client,
    state: row.state,
    extensions: row.extensions,
    version: Number(row.version),
    lastSeenAt: new Date(row.last_seen_at),
    expiresAt: new Date(row.expires_at),
  };
}

/** Session limits applied when a session is created. */
export interface StoredSessionLimits {
  maxSessions: number;
  maxSessionsPerKey: number;
  maxSessionsPerOrg: number;
  idleTtlMs: number;
}

/** The outcome of `insertSession`. */
export type InsertOutcome =
  | { admitted: true; evicted: StoredSession[] }
  | { admitted: false; retryAfterMs: number };

// One lock for every replica's session admission: counts and the insert must not interleave.
const ADMISSION_LOCK = 0x51564d53; // "QVMS"

/**
 * Inserts a session under the limits (issue #18): an owner over its own per-key or
 * per-organisation limit loses its own least recently seen live session; at the global cap
 * the new session is refused (never another tenant's live one taken). Expired rows never count.
 */
export async function insertSession(tx: Queryable, session: NewStoredSession, limits: StoredSessionLimits): Promise<InsertOutcome> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [ADMISSION_LOCK]);
  const evicted: StoredSession[] = [];
  for (const [column, value, max] of [
    ['owner_key', session.owner.key, limits.maxSessionsPerKey],
    ['owner_org', session.owner.org, limits.maxSessionsPerOrg],
  ] as const) {
    if (value === null) continue;
    const counted = await tx.query<{ n: string | number }>(`SELECT count(*) AS n FROM mcp_sessions WHERE ${column} = $1 AND expires_at >= now()`, [value]);
    const excess = Number(counted.rows[0]?.n ?? 0) - max + 1;
    if (excess <= 0) continue;
    const removed = await tx.query<SessionRow>(
      `DELETE FROM mcp_sessions WHERE id IN (
         SELECT id FROM mcp_sessions WHERE ${column} = $1 AND expires_at >= now() ORDER BY last_seen_at, created_at LIMIT $2)
       RETURNING ${COLUMNS}`,
      [value, excess],
    );
    evicted.push(...removed.rows.map(toSession));
  }
  const live = await tx.query<{ n: string | number; soonest: Date | null }>(
    `SELECT count(*) AS n, min(expires_at) AS soonest FROM mcp_sessions WHERE expires_at >= now()`,
  );
  const count = Number(live.rows[0]?.n ?? 0);
  if (count >= limits.maxSessions && evicted.length === 0) {
    const soonest = live.rows[0]?.soonest ? new Date(live.rows[0].soonest).getTime() - Date.now() : 1000;
    return { admitted: false, retryAfterMs: Math.max(1000, soonest) };
  }
  await tx.query(
    `INSERT INTO mcp_sessions (id, identity, identity_key, owner_key, owner_org, protocol_version, client, state, extensions, expires_at)
     VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, now() + $10::bigint * interval '1 millisecond')`,
    [
      session.id,
      JSON.stringify(session.identity),
      session.identityKey,
      session.owner.key,
      session.owner.org,
      session.protocolVersion,
      JSON.stringify(session.client),
      JSON.stringify(session.state),
      JSON.stringify(session.extensions),
      Math.round(limits.idleTtlMs),
    ],
  );
  return { admitted: true, evicted };
}

/** A live (unexpired) session by id. */
export async function selectSession(db: Queryable, id: string): Promise<StoredSession | undefined> {
  const result = await db.query<SessionRow>(`SELECT ${COLUMNS} FROM mcp_sessions WHERE id = $1 AND expires_at >= now()`, [id]);
  return result.rows[0] ? toSession(result.rows[0]) : undefined;
}

/**
 * The per-request freshness check of a cached copy: undefined when the session is gone or
 * expired, `{ version }` alone when it is unchanged, the whole row when another replica wrote it.
 */
export async function selectIfChanged(db: Queryable, id: string, knownVersion: number): Promise<StoredSession | { version: number } | undefined> {
  const result = await db.query<SessionRow>(
    `SELECT id, version, CASE WHEN version <> $2 THEN identity END AS identity, identity_key, owner_key, owner_org, protocol_version,
       CASE WHEN version <> $2 THEN client END AS client, CASE WHEN version <> $2 THEN state END AS state,
       CASE WHEN version <> $2 THEN extensions END AS extensions, last_seen_at, expires_at
     FROM mcp_sessions WHERE id = $1 AND expires_at >= now()`,
    [id, knownVersion],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  if (Number(row.version) === knownVersion) return { version: knownVersion };
  return toSession(row);
}

/** Replaces the state and extends the expiry; the new version, or undefined when the session is gone. */
export async function updateState(db: Queryable, id: string, state: Record<string, unknown>, idleTtlMs: number): Promise<number | undefined> {
  const result = await db.query<{ version: string | number }>(
    `UPDATE mcp_sessions SET state = $2::jsonb, version = version + 1, last_seen_at = now(),
       expires_at = now() + $3::bigint * interval '1 millisecond'
     WHERE id = $1 AND expires_at >= now() RETURNING version`,
    [id, JSON.stringify(state), Math.round(idleTtlMs)],
  );
  return result.rows[0] ? Number(result.rows[0].version) : undefined;
}

/**
 * Replaces the states of several sessions in one statement (the embedded store's flush): on
 * PGlite each statement costs about a millisecond of CPU before any work, so 150 sessions wrote
 * one at a time cost a statement each per flush (issue #28). `states` are JSON texts.
 */
export async function updateStates(db: Queryable, states: ReadonlyArray<{ id: string; json: string }>, idleTtlMs: number): Promise<void> {
  if (states.length === 0) return;
  await db.query(
    `UPDATE mcp_sessions AS s SET state = x.state::jsonb, version = s.version + 1, last_seen_at = now(),
       expires_at = now() + $3::bigint * interval '1 millisecond'
     FROM unnest($1::text[], $2::text[]) AS x(id, state)
     WHERE s.id = x.id AND s.expires_at >= now()`,
    [states.map((entry) => entry.id), states.map((entry) => entry.json), Math.round(idleTtlMs)],
  );
}

/** Sets one extension value (null removes it); the new version, or undefined when the session is gone. */
export async function updateExtension(db: Queryable, id: string, name: string, value: unknown): Promise<number | undefined> {
  const result = await db.query<{ version: string | number }>(
    `UPDATE mcp_sessions SET
       extensions = CASE WHEN $3::jsonb = 'null'::jsonb THEN extensions - $2 ELSE extensions || jsonb_build_object($2::text, $3::jsonb) END,
       version = version + 1
     WHERE id = $1 AND expires_at >= now() RETURNING version`,
    [id, name, JSON.stringify(value ?? null)],
  );
  return result.rows[0] ? Number(result.rows[0].version) : undefined;
}

/** Marks sessions seen now (write-behind of activity without a state change); the version is unchanged. */
export async function touchSessions(db: Queryable, ids: readonly string[], idleTtlMs: number): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `UPDATE mcp_sessions SET last_seen_at = now(), expires_at = now() + $2::bigint * interval '1 millisecond'
     WHERE id = ANY($1::text[]) AND expires_at >= now()`,
    [[...ids], Math.round(idleTtlMs)],
  );
}

/** Deletes a session; returns its last row when it was live. */
export async function deleteSession(db: Queryable, id: string): Promise<StoredSession | undefined> {
  const result = await db.query<SessionRow>(`DELETE FROM mcp_sessions WHERE id = $1 RETURNING ${COLUMNS}`, [id]);
  return result.rows[0] ? toSession(result.rows[0]) : undefined;
}

/** Deletes up to `limit` expired sessions and returns them (their open outcomes still to report). */
export async function deleteExpired(db: Queryable, limit: number): Promise<StoredSession[]> {
  const result = await db.query<SessionRow>(
    `DELETE FROM mcp_sessions WHERE id IN (
       SELECT id FROM mcp_sessions WHERE expires_at < now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [limit],
  );
  return result.rows.map(toSession);
}

/**
 * Takes the open selection events older than `openedBefore` (ms since the epoch) out of their
 * sessions' state and returns them: their outcome window has passed, so one replica reports them.
 */
export async function takeStaleOpenEvents(db: Queryable, openedBefore: number, limit: number): Promise<Array<{ id: string; openEvent: Record<string, unknown> }>> {
  const result = await db.query<{ id: string; open_event: Record<string, unknown> }>(
    `WITH stale AS (
       SELECT id, state->'openEvent' AS open_event FROM mcp_sessions
       WHERE state ? 'openEvent' AND (state->'openEvent'->>'openedAt')::double precision < $1
       LIMIT $2 FOR UPDATE SKIP LOCKED)
     UPDATE mcp_sessions AS m SET state = m.state - 'openEvent', version = m.version + 1
     FROM stale WHERE m.id = stale.id
     RETURNING m.id, stale.open_event`,
    [openedBefore, limit],
  );
  return result.rows.map((row) => ({ id: row.id, openEvent: row.open_event }));
}

/** Live sessions in all (for limits and the bench). */
export async function countLive(db: Queryable): Promise<number> {
  const result = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM mcp_sessions WHERE expires_at >= now()');
  return Number(result.rows[0]?.n ?? 0);
}
