/**
 * @module gateway/stored-sessions
 * The HTTP front's sessions in the database (issue #16), so any replica can serve a request
 * with a known `Mcp-Session-Id`:
 * - `start` writes a new session's row (identity as resolved from the key, owner, what the
 *   client declared) under the per-tenant and global limits, counted across every replica;
 * - `restore` rebuilds a session another replica started: the gateway session with the stored
 *   state, and an SDK transport that accepts the id without a new initialize;
 * - `sync` is the per-request freshness check of a cached copy (shared stores only);
 * - `persistBeforeResponses` writes a changed state before each response leaves, so the
 *   client's next request finds it wherever it lands; a SIGKILL loses no answered change. On
 *   the embedded database (one process) the write goes behind with the activity flush;
 * - every transport stores its SSE events (`SessionStore.events`), so a restored session
 *   replays a lost stream's events on a `GET` with `Last-Event-ID`;
 * - the session's `logging/setLevel` level and resource subscriptions are kept in the row's
 *   `extensions` (`session-forwarding-state`) and applied to a restored or refreshed copy, which
 *   subscribes upstream again.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Logger } from '../core/logger.ts';
import type { SessionStore, StoredSession } from '../sessions/index.ts';
import type { SessionIdentity } from './backend.ts';
import type { Gateway, GatewaySession } from './gateway.ts';
import { sessionTransportClass } from './sdk-servers.ts';
import { SessionPostLane, isResponse } from './session-post-lane.ts';
import { FORWARDING_EXTENSION, applyForwardingState, forwardingStateOf } from './session-forwarding-state.ts';
import type { SessionOwner } from './session-registry.ts';

/** One session this replica serves, with the row version its copy matches. */
export interface HttpSession {
  session: GatewaySession;
  transport: WebStandardStreamableHTTPServerTransport;
  identityKey: string;
  /** Row version of the cached copy (0 without a store). */
  version: number;
  /** The state as last written (JSON), to skip writes that change nothing. */
  savedState: string;
  /** Writes of this session, in order. */
  saving: Promise<void>;
  /** The forwarding state (log level, subscriptions) as last written (JSON; default 'null'). */
  savedForwarding?: string;
  /** Answers a POST of one request whole when it is ready soon (issue #28, `session-post-lane`). */
  lane: SessionPostLane;
}

/** What the client declared at initialize (stored with the session). */
export interface DeclaredClient {
  protocolVersion: string | null;
  client: Record<string, unknown>;
}

/** Reads the protocol version, capabilities and client info of an initialize body. */
export function declaredClient(body: unknown): DeclaredClient {
  const messages = Array.isArray(body) ? body : [body];
  const initialize = messages.find((message) => (message as { method?: unknown })?.method === 'initialize') as { params?: Record<string, unknown> } | undefined;
  const params = initialize?.params ?? {};
  return {
    protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : null,
    client: { capabilities: params.capabilities ?? {}, clientInfo: params.clientInfo ?? null },
  };
}

/**
 * Marks a fresh transport as initialized for `id`: the SDK sets these two fields when it
 * answers initialize, and checks them (`validateSession`) on every later request.
 */
function adoptSessionId(transport: WebStandardStreamableHTTPServerTransport, id: string): void {
  const fields = transport as unknown as { sessionId?: string; _initialized: boolean };
  if (typeof fields._initialized !== 'boolean') throw new Error('this MCP SDK version cannot restore a Streamable HTTP session');
  fields.sessionId = id;
  fields._initialized = true;
}

/** Gives a restored server what initialize told the original one (capability checks read it). */
function adoptClient(server: Server, client: Record<string, unknown>): void {
  const fields = server as unknown as { _clientCapabilities?: unknown; _clientVersion?: unknown };
  fields._clientCapabilities = client.capabilities ?? {};
  fields._clientVersion = client.clientInfo ?? undefined;
}


/** Stored-session support of the HTTP front. */
export class StoredSessions {
  readonly store: SessionStore;
  readonly #gateway: Gateway;
  readonly #logger: Logger;

  constructor(store: SessionStore, gateway: Gateway, logger: Logger) {
    this.store = store;
    this.#gateway = gateway;
    this.#logger = logger;
  }

  /**
   * Writes a new session's row. Refused (global cap across replicas): the retry delay in ms.
   * Sessions the owner's own limits pushed out are reported and closed where they are cached.
   */
  async start(
    entry: HttpSession,
    identity: SessionIdentity,
    owner: SessionOwner,
    declared: DeclaredClient,
    dropLocal: (id: string) => void,
  ): Promise<number | undefined> {
    const state = entry.session.snapshot() as unknown as Record<string, unknown>;
    const outcome = await this.store.create({
      id: entry.session.id,
      identity: { ...identity },
      identityKey: entry.identityKey,
      owner,
      protocolVersion: declared.protocolVersion,
      client: declared.client,
      state,
      extensions: {},
    });
    if (!outcome.admitted) return outcome.retryAfterMs;
    entry.version = 1;
    entry.savedState = JSON.stringify(state);
    for (const evicted of outcome.evicted) this.#ended(evicted, dropLocal);
    return undefined;
  }

  /** A session another replica (or an earlier run of this one) started, rebuilt here; undefined when unknown. */
  async restore(
    id: string,
    identity: SessionIdentity,
    identityKey: string,
    transportOptions: ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0],
    answerHoldMs?: number,
  ): Promise<HttpSession | undefined> {
    const row = await this.store.load(id);
    // Another identity's session is as good as none.
    if (!row || row.identityKey !== identityKey) return undefined;
    const session = await this.#gateway.openSession(identity, { sessionId: id, owner: row.owner, restore: row.state });
    const eventStore = this.store.events.forSession(id);
    const Transport = await sessionTransportClass();
    const transport = new Transport({ ...transportOptions, eventStore, sessionIdGenerator: () => id });
    adoptSessionId(transport, id);
    // Before persistBeforeResponses wraps `send`, so a held answer's state is written as the SDK's would be.
    const lane = new SessionPostLane(transport, { eventStore, holdMs: answerHoldMs });
    const entry: HttpSession = { session, transport, identityKey, version: row.version, savedState: JSON.stringify(row.state), saving: Promise.resolve(), lane };
    this.persistBeforeResponses(entry);
    await session.connect(transport);
    adoptClient(session.server, row.client);
    await applyForwardingState(session, row.extensions[FORWARDING_EXTENSION], this.#logger);
    entry.savedForwarding = JSON.stringify(forwardingStateOf(session));
    this.#logger.debug({ sessionId: id, version: row.version }, 'http session restored from the store');
    return entry;
  }

  /** Brings a cached copy up to date (shared stores); false when the session is gone. */
  async sync(entry: HttpSession): Promise<boolean> {
    if (!this.store.shared) return true;
    const fresh = await this.store.check(entry.session.id, entry.version);
    if (!fresh) return false;
    if ('state' in fresh) {
      await entry.session.restore(fresh.state);
      entry.version = fresh.version;
      entry.savedState = JSON.stringify(fresh.state);
      await applyForwardingState(entry.session, fresh.extensions[FORWARDING_EXTENSION], this.#logger);
      entry.savedForwarding = JSON.stringify(forwardingStateOf(entry.session));
    }
    return true;
  }

  /** Wraps the transport's `send`: before a response goes out, a changed state is written. */
  persistBeforeResponses(entry: HttpSession): void {
    const { transport } = entry;
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      if (isResponse(message)) await this.#save(entry);
      return send(message, options);
    };
  }

  /** Ends a session for good (the client's DELETE): its row goes. */
  async end(id: string): Promise<void> {
    await this.store.delete(id);
  }

  /** Writes what changed since the last write (state, forwarding state), in order with earlier writes. */
  #save(entry: HttpSession): Promise<void> {
    entry.saving = entry.saving.then(async () => {
      await this.#saveState(entry);
      await this.#saveForwarding(entry);
    });
    return entry.saving;
  }

  /** Writes the log level and subscriptions when they changed (rare: written through on every store). */
  async #saveForwarding(entry: HttpSession): Promise<void> {
    const value = forwardingStateOf(entry.session);
    const json = JSON.stringify(value);
    if (json === (entry.savedForwarding ?? 'null')) return;
    try {
      const version = await this.store.setExtension(entry.session.id, FORWARDING_EXTENSION, value);
      if (version === undefined) return;
      entry.version = version;
      entry.savedForwarding = json;
    } catch (error) {
      this.#logger.warn({ err: error, sessionId: entry.session.id }, 'writing MCP session forwarding state failed');
    }
  }

  /** Writes the state when it changed since the last write, else marks the session active. */
  async #saveState(entry: HttpSession): Promise<void> {
    if (!this.store.shared) {
      // One process owns the embedded database: nobody else reads the row before the next flush,
      // so the state is taken (and compared with the last write) once per flush, not per response (issue #28).
      this.store.saveStateLater(entry.session.id, () => entry.session.snapshot() as unknown as Record<string, unknown>);
      return;
    }
    const state = entry.session.snapshot() as unknown as Record<string, unknown>;
    const json = JSON.stringify(state);
    if (json === entry.savedState) {
      this.store.touch(entry.session.id);
      return;
    }
    try {
      const version = await this.store.saveState(entry.session.id, state);
      if (version === undefined) {
        this.#logger.debug({ sessionId: entry.session.id }, 'session ended elsewhere; its last change was not stored');
        return;
      }
      entry.version = version;
      entry.savedState = json;
    } catch (error) {
      // The answer still goes out; the next change is written again in full.
      this.#logger.warn({ err: error, sessionId: entry.session.id }, 'writing MCP session state failed');
    }
  }

  /** A session ended by the limits elsewhere: report its open outcome, drop a cached copy. */
  #ended(row: StoredSession, dropLocal: (id: string) => void): void {
    this.#gateway.reportStoredOutcome(row.state);
    dropLocal(row.id);
  }
}
