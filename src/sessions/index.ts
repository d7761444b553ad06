/**
 * @module sessions
 * MCP sessions any replica can serve (issue #16): the `mcp_sessions` table behind a
 * `SessionStore` the gateway's HTTP front caches in memory. See docs/scale-out.md.
 *
 * @example
 * const store = createSessionStore({ db, limits: { maxSessions: 1000, maxSessionsPerKey: 100, maxSessionsPerOrg: 250, idleTtlMs: 300_000 } });
 * const outcome = await store.create({ id, identity, identityKey, owner, protocolVersion, client: {}, state: {}, extensions: {} });
 */
export {
  createSessionStore,
  type SessionStore,
  type SessionStoreOptions,
  type StoredSession,
  type NewStoredSession,
  type StoredSessionLimits,
  type StoredSessionOwner,
  type InsertOutcome,
} from './session-store.ts';
export { createSessionEventStore, type SessionEventStore, type SessionEventStoreOptions } from './event-store.ts';
