/**
 * @module sessions/session-store
 * The durable side of MCP sessions (issue #16): a `SessionStore` over the `mcp_sessions` table.
 * A replica keeps each session it serves in memory (the gateway's session object is the cache)
 * with the version it last saw; this store decides what that cache costs:
 * - identity, owner and what the client declared are written through when the session starts;
 * - the gateway state (bound tools, loop guard, search history, open selection event) is written
 *   through whenever a request changed it, before the response leaves the replica, so the
 *   client's next request finds it on any replica (`shared`); on the embedded database, which
 *   one process owns, it is written behind with the activity (`saveStateLater`): a crash there
 *   loses at most the last `touchEveryMs` of changes, where before every session was lost;
 * - activity without a change (a `tools/list`, a repeated call) only pushes the expiry forward,
 *   written behind every `touchEveryMs` in one statement: a SIGKILL loses at most that much of
 *   a session's idle clock, never its state;
 * - `shared` (PostgreSQL, several replicas): each request compares the cached version with the
 *   row's (one indexed read returning no JSON when unchanged) and reloads a copy another
 *   replica wrote. On the embedded database one process owns the data, so the check is skipped.
 */
import { silentLogger, type Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import { createSessionEventStore, type SessionEventStore } from './event-store.ts';
import { createMemoryEventStore } from './memory-event-store.ts';
import {
  countLive,
  deleteExpired,
  deleteSession,
  insertSession,
  selectIfChanged,
  selectSession,
  takeStaleOpenEvents,
  touchSessions,
  updateExtension,
  updateState,
  updateStates,
  type InsertOutcome,
  type NewStoredSession,
  type StoredSession,
  type StoredSessionLimits,
} from './repository.ts';

export type { InsertOutcome, NewStoredSession, StoredSession, StoredSessionLimits, StoredSessionOwner } from './repository.ts';

/** Options of `createSessionStore`. */
export interface SessionStoreOptions {
  db: Database;
  limits: StoredSessionLimits;
  /** Compare each request's cached copy with the row (default: true on PostgreSQL, false on PGlite). */
  shared?: boolean;
  /** How often pending activity is written, ms (default: a tenth of the idle TTL, at most 5 s). */
  touchEveryMs?: number;
  /** Bounds of the SSE events kept for resuming streams (see `sessions/event-store`). */
  events?: { maxEventsPerSession?: number; maxAgeMs?: number };
  logger?: Logger;
}

/** MCP sessions in the database; see the module comment. */
export interface SessionStore {
  /** True when every request checks its cached copy against the row (several replicas). */
  readonly shared: boolean;
  readonly limits: Readonly<StoredSessionLimits>;
  /** The SSE events of these sessions, replayable from any replica (`Last-Event-ID`). */
  readonly events: SessionEventStore;
  /** Inserts a session under the per-tenant and global limits. */
  create(session: NewStoredSession): Promise<InsertOutcome>;
  /** A live session by id. */
  load(id: string): Promise<StoredSession | undefined>;
  /** Undefined: gone or expired; `{ version }`: the cached copy is current; a row: reload it. */
  check(id: string, knownVersion: number): Promise<StoredSession | { version: number } | undefined>;
  /** Writes a changed state through; the new version, or undefined when the session is gone. */
  saveState(id: string, state: Record<string, unknown>): Promise<number | undefined>;
  /**
   * Queues the state, written with the next activity flush (single-process stores). Given a
   * function, the state is taken at the flush: a session answering many requests between two
   * flushes is snapshotted and serialised once, and written only when it changed (issue #28).
   */
  saveStateLater(id: string, state: Record<string, unknown> | (() => Record<string, unknown>)): void;
  /** Sets a per-session value of another part (null removes it); the new version or undefined. */
  setExtension(id: string, name: string, value: unknown): Promise<number | undefined>;
  /** Marks a session active; written behind (see `touchEveryMs`). */
  touch(id: string): void;
  /** Ends a session; its last row when it was there. */
  delete(id: string): Promise<StoredSession | undefined>;
  /** Deletes expired sessions (the one replica running the collect job calls this). */
  collectExpired(limit?: number): Promise<StoredSession[]>;
  /** Takes open selection events opened before `openedBefore` (epoch ms) out of their sessions. */
  takeStaleOpenEvents(openedBefore: number, limit?: number): Promise<Array<{ id: string; openEvent: Record<string, unknown> }>>;
  /** Live sessions across every replica. */
  countLive(): Promise<number>;
  /** Writes pending activity now. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

/** Queued states written by one statement of a flush (bounds the statement's size). */
const STATES_PER_STATEMENT = 50;

/** Creates the store. */
export function createSessionStore(options: SessionStoreOptions): SessionStore {
  const { db, limits } = options;
  const logger = (options.logger ?? silentLogger).child({ part: 'session-store' });
  const shared = options.shared ?? db.engine === 'postgres';
  const touchEveryMs = options.touchEveryMs ?? Math.min(5_000, Math.max(100, Math.floor(limits.idleTtlMs / 10)));
  const pendingTouches = new Set<string>();
  const pendingStates = new Map<string, Record<string, unknown> | (() => Record<string, unknown>)>();
  // The JSON last written per session by a flush, to write a queued state only when it changed.
  const written = new Map<string, string>();
  // One process owns the embedded database: no other replica resumes a stream, so its events stay in memory (issue #28).
  const memoryEvents = shared ? undefined : createMemoryEventStore(options.events);
  const events = memoryEvents ?? createSessionEventStore({ db, ...options.events, logger });
  const forget = (id: string): void => {
    pendingTouches.delete(id);
    pendingStates.delete(id);
    written.delete(id);
    memoryEvents?.forget(id);
  };
  let flushing: Promise<void> | undefined;
  const timer = setInterval(() => void flush(), touchEveryMs);
  timer.unref();

  async function flush(): Promise<void> {
    if (flushing) await flushing;
    if (pendingTouches.size === 0 && pendingStates.size === 0) return;
    const ids = [...pendingTouches];
    const states = [...pendingStates];
    pendingTouches.clear();
    pendingStates.clear();
    flushing = (async () => {
      // One session's state failing (a snapshot that throws, a write refused) must not cost the
      // others their activity: a session left untouched expires while its client still uses it.
      const changed: Array<{ id: string; json: string; state: Record<string, unknown> }> = [];
      for (const [id, queued] of states) {
        try {
          const state = typeof queued === 'function' ? queued() : queued;
          const json = JSON.stringify(state);
          if (written.get(id) === json) ids.push(id);
          else changed.push({ id, json, state });
        } catch (error) {
          ids.push(id);
          logger.warn({ err: error, session: id }, 'recording an MCP session state failed');
        }
      }
      // A few statements per flush, not one per session (issue #28); a chunk the database
      // refuses is written one state at a time, so a bad state costs only its own write.
      for (let start = 0; start < changed.length; start += STATES_PER_STATEMENT) {
        const chunk = changed.slice(start, start + STATES_PER_STATEMENT);
        try {
          await updateStates(db, chunk, limits.idleTtlMs);
          for (const entry of chunk) written.set(entry.id, entry.json);
        } catch {
          for (const entry of chunk) {
            try {
              await updateState(db, entry.id, entry.state, limits.idleTtlMs);
              written.set(entry.id, entry.json);
            } catch (error) {
              ids.push(entry.id);
              logger.warn({ err: error, session: entry.id }, 'recording an MCP session state failed');
            }
          }
        }
      }
      try {
        await touchSessions(db, ids, limits.idleTtlMs);
      } catch (error) {
        logger.warn({ err: error, sessions: ids.length }, 'recording MCP session activity failed');
      }
    })().finally(() => (flushing = undefined));
    await flushing;
  }

  return {
    shared,
    limits: Object.freeze({ ...limits }),
    events,
    create: (session) => db.transaction((tx) => insertSession(tx, session, limits)),
    load: (id) => selectSession(db, id),
    check: (id, knownVersion) => selectIfChanged(db, id, knownVersion),
    saveState(id, state) {
      // The write carries the activity too.
      pendingTouches.delete(id);
      pendingStates.delete(id);
      return updateState(db, id, state, limits.idleTtlMs);
    },
    saveStateLater(id, state) {
      pendingTouches.delete(id);
      pendingStates.set(id, state);
    },
    setExtension: (id, name, value) => updateExtension(db, id, name, value),
    touch(id) {
      if (!pendingStates.has(id)) pendingTouches.add(id);
    },
    delete(id) {
      forget(id);
      return deleteSession(db, id);
    },
    async collectExpired(limit = 500) {
      const expired = await deleteExpired(db, limit);
      for (const session of expired) forget(session.id);
      return expired;
    },
    takeStaleOpenEvents: (openedBefore, limit = 500) => takeStaleOpenEvents(db, openedBefore, limit),
    countLive: () => countLive(db),
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
