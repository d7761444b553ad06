/**
 * @module sessions/memory-event-store
 * The SSE events of sessions whose store one process owns (the embedded database, issue #28):
 * kept in memory instead of one `mcp_session_events` row per message. On PGlite no other
 * replica can receive a resuming `GET`, so the rows only cost: they were 4.45 of 6.25
 * statements per search + call round and about half the server's CPU under 150 sessions.
 * A stream is resumable while this process runs, within the same bounds as the table (events
 * per session, age); a restart loses them (the stream itself is gone with the process).
 * Event ids come from one counter, so they are unique and increasing across sessions, and a
 * replay reads only the named session's events (another session's id is unknown).
 */
import type { EventStore, EventId, StreamId } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SessionEventStore } from './event-store.ts';

/** Options of `createMemoryEventStore`. */
export interface MemoryEventStoreOptions {
  /** Most events kept per session (default 1000). */
  maxEventsPerSession?: number;
  /** Oldest event kept, ms (default 10 minutes). */
  maxAgeMs?: number;
  /** The clock (epoch ms). */
  now?: () => number;
}

interface StoredEvent {
  id: number;
  streamId: StreamId;
  message: JSONRPCMessage;
  at: number;
}

/** The in-memory event store, with `forget` for a session that ended. */
export interface MemoryEventStore extends SessionEventStore {
  /** Drops a session's events (it ended). */
  forget(sessionId: string): void;
}

/** Creates the in-memory event store; see the module comment. */
export function createMemoryEventStore(options: MemoryEventStoreOptions = {}): MemoryEventStore {
  const maxEventsPerSession = options.maxEventsPerSession ?? 1000;
  const maxAgeMs = options.maxAgeMs ?? 600_000;
  const now = options.now ?? Date.now;
  const sessions = new Map<string, StoredEvent[]>();
  let lastId = 0;

  const find = (sessionId: string, eventId: string): StoredEvent | undefined => {
    if (!/^[1-9]\d{0,15}$/.test(eventId)) return undefined;
    const id = Number(eventId);
    return sessions.get(sessionId)?.find((event) => event.id === id);
  };

  function forSession(sessionId: string): EventStore {
    return {
      async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
        let events = sessions.get(sessionId);
        if (!events) sessions.set(sessionId, (events = []));
        const id = ++lastId;
        events.push({ id, streamId, message, at: now() });
        if (events.length > maxEventsPerSession) events.splice(0, events.length - maxEventsPerSession);
        return String(id);
      },
      getStreamIdForEventId: async (eventId) => find(sessionId, eventId)?.streamId,
      async replayEventsAfter(lastEventId, { send }): Promise<StreamId> {
        const last = find(sessionId, lastEventId);
        if (last === undefined) throw new Error(`unknown event id ${lastEventId}`);
        for (const event of sessions.get(sessionId) ?? []) {
          // Priming events (empty) only carry an id; there is nothing to send again.
          if (event.id <= last.id || event.streamId !== last.streamId || !('jsonrpc' in event.message)) continue;
          await send(String(event.id), event.message);
        }
        return last.streamId;
      },
    };
  }

  return {
    maxEventsPerSession,
    maxAgeMs,
    forSession,
    forget(sessionId) {
      sessions.delete(sessionId);
    },
    async collect() {
      const oldest = now() - maxAgeMs;
      let gone = 0;
      for (const [sessionId, events] of sessions) {
        const keep = events.findIndex((event) => event.at >= oldest);
        const drop = keep < 0 ? events.length : keep;
        gone += drop;
        if (drop === events.length) sessions.delete(sessionId);
        else if (drop > 0) events.splice(0, drop);
      }
      return gone;
    },
  };
}
