/**
 * @module sessions/event-store
 * Resumable SSE across replicas (issue #16 follow-up): the MCP SDK's `EventStore` over the
 * `mcp_session_events` table (migration 0069). The `/mcp` transport of a stored session stores
 * each message it sends on an SSE stream (and the empty priming event); a client that lost its
 * stream sends `GET` with `Last-Event-ID` to any replica, which restores the session and replays
 * the stream's later events from here. Event ids are the table's `bigserial`, so they are
 * monotonic across replicas; a replay only reads the named session's rows (an id of another
 * session is unknown). Bounded: at most `maxEventsPerSession` per session (trimmed every
 * `trimEvery` stores of a session on this replica) and none older than `maxAgeMs` (`collect`,
 * run by the sessions.collect job); rows go with their session (ON DELETE CASCADE).
 * Failing open: a store that cannot write logs and hands back an id that replays nothing, so the
 * live message still goes out.
 */
import type { EventStore, EventId, StreamId } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { silentLogger, type Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';

/** Options of `createSessionEventStore`. */
export interface SessionEventStoreOptions {
  db: Database;
  /** Most events kept per session (default 1000). */
  maxEventsPerSession?: number;
  /** Oldest event kept, ms (default 10 minutes). */
  maxAgeMs?: number;
  /** A session's events are trimmed to the cap every this many stores on one replica (default 50). */
  trimEvery?: number;
  logger?: Logger;
}

/** SSE events of stored sessions; see the module comment. */
export interface SessionEventStore {
  readonly maxEventsPerSession: number;
  readonly maxAgeMs: number;
  /** The SDK event store of one session. */
  forSession(sessionId: string): EventStore;
  /** Deletes events older than `maxAgeMs`; how many went. */
  collect(): Promise<number>;
}

/** The id handed out when an event could not be stored: it replays nothing. */
const UNSTORED_EVENT_ID = '0';

function parseEventId(eventId: string): string | undefined {
  return /^[1-9]\d{0,18}$/.test(eventId) ? eventId : undefined;
}

/** Inserts one event when its session exists; the event id, or undefined when the session is gone. */
async function insertEvent(db: Database, sessionId: string, streamId: string, message: unknown): Promise<string | undefined> {
  const result = await db.query<{ id: string | number }>(
    `INSERT INTO mcp_session_events (session_id, stream_id, message)
     SELECT $1, $2, $3::jsonb WHERE EXISTS (SELECT 1 FROM mcp_sessions WHERE id = $1) RETURNING id`,
    [sessionId, streamId, JSON.stringify(message)],
  );
  return result.rows[0] ? String(result.rows[0].id) : undefined;
}

/** Keeps the newest `max` events of a session. */
async function trimSession(db: Database, sessionId: string, max: number): Promise<void> {
  await db.query(
    `DELETE FROM mcp_session_events WHERE session_id = $1 AND id <= (
       SELECT id FROM mcp_session_events WHERE session_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)`,
    [sessionId, max],
  );
}

async function streamOf(db: Database, sessionId: string, eventId: string): Promise<string | undefined> {
  const id = parseEventId(eventId);
  if (!id) return undefined;
  const result = await db.query<{ stream_id: string }>('SELECT stream_id FROM mcp_session_events WHERE id = $1 AND session_id = $2', [id, sessionId]);
  return result.rows[0]?.stream_id;
}

/** Creates the event store of stored sessions. */
export function createSessionEventStore(options: SessionEventStoreOptions): SessionEventStore {
  const { db } = options;
  const logger = (options.logger ?? silentLogger).child({ component: 'session-events' });
  const maxEventsPerSession = options.maxEventsPerSession ?? 1000;
  const maxAgeMs = options.maxAgeMs ?? 600_000;
  const trimEvery = Math.max(1, options.trimEvery ?? 50);
  const storedSince = new Map<string, number>();

  async function trimLater(sessionId: string): Promise<void> {
    const count = (storedSince.get(sessionId) ?? 0) + 1;
    if (count < trimEvery) {
      storedSince.set(sessionId, count);
      return;
    }
    storedSince.delete(sessionId);
    await trimSession(db, sessionId, maxEventsPerSession);
  }

  function forSession(sessionId: string): EventStore {
    return {
      async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
        try {
          const id = await insertEvent(db, sessionId, streamId, message);
          if (id === undefined) {
            storedSince.delete(sessionId);
            return UNSTORED_EVENT_ID;
          }
          await trimLater(sessionId);
          return id;
        } catch (error) {
          logger.warn({ err: error, sessionId }, 'storing an SSE event failed; it cannot be replayed');
          return UNSTORED_EVENT_ID;
        }
      },
      getStreamIdForEventId: (eventId) => streamOf(db, sessionId, eventId),
      async replayEventsAfter(lastEventId, { send }): Promise<StreamId> {
        const streamId = await streamOf(db, sessionId, lastEventId);
        if (streamId === undefined) throw new Error(`unknown event id ${lastEventId}`);
        const result = await db.query<{ id: string | number; message: Record<string, unknown> }>(
          'SELECT id, message FROM mcp_session_events WHERE session_id = $1 AND stream_id = $2 AND id > $3 ORDER BY id',
          [sessionId, streamId, lastEventId],
        );
        for (const row of result.rows) {
          // Priming events (empty) only carry an id; there is nothing to send again.
          if (!('jsonrpc' in row.message)) continue;
          await send(String(row.id), row.message as unknown as JSONRPCMessage);
        }
        return streamId;
      },
    };
  }

  return {
    maxEventsPerSession,
    maxAgeMs,
    forSession,
    async collect() {
      const result = await db.query<{ n: string | number }>(
        `WITH gone AS (DELETE FROM mcp_session_events WHERE created_at < now() - $1::bigint * interval '1 millisecond' RETURNING 1)
         SELECT count(*) AS n FROM gone`,
        [Math.round(maxAgeMs)],
      );
      return Number(result.rows[0]?.n ?? 0);
    },
  };
}
