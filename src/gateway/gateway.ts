/**
 * @module gateway/gateway
 * Quiver as one MCP endpoint (DESIGN §3.8, seed 004). `createGateway` makes per-client
 * sessions, each with its own low-level MCP `Server` (tool lists differ per session and
 * change while it runs), bound to a `SessionIdentity`. A session exposes, by exposure mode:
 * - `search` (default): `search_tools` + `call_tool`, the always-visible and pinned tools,
 *   and what the session discovered (seed 004 §3);
 * - `capabilities`: `list_capabilities` / `load_capability` (seed 002) + `call_tool`;
 * - `all`: every enabled, non-silent tool.
 * It keeps the bounded tool context (§6), the iteration guard (§7), redundant-search
 * detection (§8), proxies calls, resources and prompts to the backend, and closes the
 * selection feedback loop itself (records outcomes and calls).
 *
 * This module is the assembly and the session lifecycle (open, refresh on catalog changes,
 * idle sweep, close); the parts live beside it: settings (`gateway-settings`), session state
 * and feedback (`session-state`), listed tools (`listed-tools`), meta-tools
 * (`meta-tool-handlers`), tool-call proxying (`tool-proxy`), request handlers
 * (`request-handlers`) and argument validation (`argument-validators`).
 *
 * @example
 * const gateway = createGateway({ backend });
 * const session = await gateway.openSession({ workspace: 'default', project: null, orgId: null, userId: null, roles: [], tier: null });
 * await session.connect(new StdioServerTransport());
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Server as ModernServer } from '@modelcontextprotocol/server';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../core/hash.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import { Admission, overloaded } from './admission.ts';
import { createValidatorCache } from './argument-validators.ts';
import type { BackendSession, CatalogChange, GatewayBackend, SessionIdentity } from './backend.ts';
import { resolveGatewaySettings, type GatewayOptions } from './gateway-settings.ts';
import { instructionsFor, notifyToolsChanged } from './listed-tools.ts';
import { ParkedCalls, type ParkingLimits } from './mrtr/parked-calls.ts';
import { foreignRoute, requestStateKey } from './mrtr/request-state.ts';
import { installRequestHandlers } from './request-handlers.ts';
import { SessionRegistry, type ReleasedSession, type SessionOwner } from './session-registry.ts';
import { SessionState, flushOutcome, flushStoredOutcome, type GatewayCore, type GatewaySession } from './session-state.ts';

export { DEFAULT_ADMISSION, DEFAULT_SESSION_LIMITS, type GatewayOptions } from './gateway-settings.ts';
export type { GatewaySession, SessionSnapshot } from './session-state.ts';

export interface CreateGatewayOptions {
  backend: GatewayBackend;
  logger?: Logger;
  /** Milliseconds; injected for tests (default `Date.now`). */
  clock?: () => number;
  options?: GatewayOptions;
  /**
   * Sessions are stored in the database (issue #16): this process's sessions are cached copies,
   * so the sweep only drops idle copies (without reporting their outcomes) and leaves stale
   * outcomes to the one replica running the sessions.collect job, which reads them from the rows.
   */
  storedSessions?: boolean;
  /**
   * Issue #24: the key `input_required` request states are sealed with (`requestStateKey` of the
   * hub's secret key, so replicas check each other's); a random one per process when absent.
   */
  requestStateKey?: Uint8Array;
  /** Limits of calls paused on a 2026-07-28 client's input. */
  parking?: Partial<ParkingLimits>;
  /**
   * This replica's id in the replica table (several replicas on PostgreSQL): the route sealed into
   * each `requestState`, so a retry reaching another replica can be forwarded to this one.
   */
  replicaId?: string;
}

/** Options of `Gateway.openSession`. */
export interface OpenSessionOptions {
  sessionId?: string;
  owner?: SessionOwner;
  /** A stored session's state to carry on (another replica served it before). */
  restore?: unknown;
}

/** The gateway: a factory and registry of sessions. */
export interface Gateway {
  /**
   * Opens a session for an identity (loads its always-include tools and catalog overview).
   * `owner` is who the per-tenant limits count it against (default: the identity itself).
   * Throws `rate_limited` (details.retryAfterSeconds) when the gateway holds its most sessions.
   */
  openSession(identity: SessionIdentity, options?: OpenSessionOptions): Promise<GatewaySession>;
  /** A live session by id. */
  getSession(id: string): GatewaySession | undefined;
  /**
   * Issue #24: the SDK v2 server that answers one 2026-07-28 request for an identity. Its
   * handlers work on the identity's principal state (`principalSession`), shared by every
   * request of that identity on this process: there is no protocol session in that revision.
   */
  modernServer(identity: SessionIdentity): Promise<ModernServer>;
  /**
   * The still state of an identity (bounded context, loop guard, search history, open outcome),
   * opened on first use and kept while requests come (the idle sweep closes it and reports its
   * outcome). Its exposure is `still` unless the identity's mode is `all`.
   */
  principalSession(identity: SessionIdentity): Promise<GatewaySession>;
  /**
   * Issue #24: runs `listener` after a catalog change (installs, enablement, rules) was applied to
   * the sessions, so the 2026-07-28 fronts can tell `subscriptions/listen` streams; returns the unsubscribe.
   */
  onListsChanged(listener: () => void): () => void;
  /**
   * The replica that holds the paused call a 2026-07-28 retry resumes, when that is another
   * replica and the retry's `requestState` is valid for this identity and request; else undefined.
   */
  foreignRoute(identity: SessionIdentity, method: string, params: Record<string, unknown>): string | undefined;
  /** Marks a session active (transports call this on every request). */
  touchSession(id: string): void;
  /** Number of live sessions. */
  readonly sessionCount: number;
  /** True when a new search would be refused at once (fronts answer 503 before doing any work). */
  readonly saturated: boolean;
  /** Closes idle sessions and records stale outcomes; returns how many sessions closed. */
  sweep(): Promise<number>;
  /** Reports the open outcome of a stored session's state that no replica holds any more. */
  reportStoredOutcome(state: unknown): void;
  /** How long a search's outcome stays open before it is reported as it stands, ms. */
  readonly outcomeWindowMs: number;
  /** Closes every session and stops timers. */
  close(): Promise<void>;
}

/** `modern-server.ts`, imported by the first 2026-07-28 request of any gateway in the process. */
let modernServerModule: Promise<typeof import('./modern-server.ts')> | undefined;

/** Creates the gateway. Call `close()` to stop its sweep timer and sessions. */
export function createGateway(options: CreateGatewayOptions): Gateway {
  const logger = (options.logger ?? silentLogger).child({ component: 'gateway' });
  const now = options.clock ?? Date.now;
  const settings = resolveGatewaySettings(options.options);
  const { sweepIntervalMs, ...limits } = settings.sessions;
  const core: GatewayCore = {
    backend: options.backend,
    logger,
    now,
    settings,
    registry: new SessionRegistry<SessionState>({ ...limits, now }),
    admission: new Admission(settings.admission),
    validators: createValidatorCache(logger),
    inputRounds: {
      parked: new ParkedCalls(options.parking),
      key: options.requestStateKey ?? requestStateKey(undefined),
      now,
      ...(options.replicaId ? { replica: options.replicaId } : {}),
    },
  };
  const { backend, registry } = core;
  let closing = false;

  const unsubscribe = backend.onCatalogChanged((change) => void onCatalogChanged(change));
  const timer = sweepIntervalMs > 0 ? setInterval(() => void sweep(), sweepIntervalMs) : undefined;
  timer?.unref();

  /** Loads what a session shows before the model asks: always-include tools and the overview. */
  async function refresh(state: SessionState): Promise<void> {
    const [always, overview] = await Promise.all([
      state.mode === 'all' ? Promise.resolve([]) : backend.listVisibleTools(state.backendSession, { visibility: ['always'], includePinned: true }),
      backend.catalogOverview(state.backendSession),
    ]);
    state.context.setAlwaysInclude(always.filter((tool) => tool.visibility !== 'silent'));
    state.overview = overview;
  }

  function release(released: Array<ReleasedSession<SessionState>>): void {
    for (const { value, id, reason } of released) {
      logger.debug({ sessionId: id, reason }, 'session released');
      // A stored session's row outlives this copy: its outcome is reported where it ends.
      // A principal state (issue #24) has no row: its outcome is reported here.
      void value.close({ report: !options.storedSessions || value.principal });
    }
  }

  /** Refuses when the gateway is full of live sessions (finding 3: never evict another tenant). */
  function refuseWhenFull(admitted: boolean, retryAfterMs: number): void {
    if (admitted) return;
    const retryAfterSeconds = Math.ceil(retryAfterMs / 1000);
    logger.warn({ sessions: registry.size, retryAfterSeconds }, 'session refused: the gateway holds its most sessions');
    throw overloaded(`${registry.size} live MCP sessions`, retryAfterSeconds);
  }

  async function openSession(identity: SessionIdentity, open: OpenSessionOptions = {}): Promise<GatewaySession> {
    if (closing) throw new McpError(ErrorCode.ConnectionClosed, 'the gateway is shutting down');
    const owner: SessionOwner = open.owner ?? { key: canonicalJson(identity), org: identity.orgId };
    // Checked before the work of opening, and again when adding (others may have come in between).
    const early = registry.admission(owner);
    release(early.released);
    refuseWhenFull(early.admitted, early.retryAfterMs);
    const id = open.sessionId ?? randomUUID();
    const mode = settings.modeFor(identity);
    const probe: BackendSession = { ...identity, sessionId: id };
    const overview = await backend.catalogOverview(probe);
    const state = await SessionState.open(core, identity, id, mode, instructionsFor(mode, overview));
    state.nativeNames = settings.nativeNamesFor(identity);
    installRequestHandlers(core, state);
    await refresh(state);
    if (open.restore !== undefined) await state.restore(open.restore);
    const added = registry.add(id, state, owner);
    release(added.released);
    if (!added.admitted) {
      await state.close();
      refuseWhenFull(false, added.retryAfterMs);
    }
    logger.debug({ sessionId: id, mode, workspace: identity.workspace, orgId: identity.orgId }, 'session opened');
    return state;
  }

  // Concurrent first requests of one principal share one opening.
  const openingPrincipals = new Map<string, Promise<SessionState>>();

  /** The principal state's identity and id: the same on every replica (a requestState is bound to the id). */
  function principalOf(identity: SessionIdentity): { fixed: SessionIdentity; id: string } {
    // 2026-07-28 forbids a list that changes as a side effect: `search` and `capabilities` become `still`.
    const exposureMode = settings.modeFor(identity) === 'all' ? 'all' : 'still';
    const fixed: SessionIdentity = { ...identity, exposureMode };
    return { fixed, id: `principal-${createHash('sha256').update(canonicalJson(fixed)).digest('hex').slice(0, 32)}` };
  }

  async function principalSession(identity: SessionIdentity): Promise<SessionState> {
    const { fixed, id } = principalOf(identity);
    const live = registry.peek(id);
    if (live) {
      registry.touch(id);
      return live;
    }
    let pending = openingPrincipals.get(id);
    if (!pending) {
      pending = openSession(fixed, { sessionId: id }).then((session) => {
        const state = session as SessionState;
        state.principal = true;
        return state;
      });
      pending.finally(() => openingPrincipals.delete(id)).catch(() => undefined);
      openingPrincipals.set(id, pending);
    }
    return pending;
  }

  async function modernServer(identity: SessionIdentity): Promise<ModernServer> {
    const state = await principalSession(identity);
    // The 2026-07-28 server (and the SDK v2 under it) loads with the first such request (issue #28);
    // later requests take the kept module instead of going through the module loader again.
    const { createModernServer } = await (modernServerModule ??= import('./modern-server.ts'));
    return createModernServer(core, state, instructionsFor(state.mode, state.overview));
  }

  const listsChanged = new Set<() => void>();

  async function onCatalogChanged(change: CatalogChange): Promise<void> {
    const affected = registry.values().filter((state) => !change.workspaces || change.workspaces.includes(state.identity.workspace));
    await Promise.allSettled(
      affected.map(async (state) => {
        try {
          await refresh(state);
          await notifyToolsChanged(core, undefined, state);
        } catch (error) {
          logger.warn({ err: error, sessionId: state.id }, 'refreshing a session after a catalog change failed');
        }
      }),
    );
    for (const listener of listsChanged) {
      try {
        listener();
      } catch (error) {
        logger.warn({ err: error }, 'a list-change listener failed');
      }
    }
  }

  async function sweep(): Promise<number> {
    const expired = registry.sweep();
    for (const { id } of expired) logger.debug({ sessionId: id }, 'idle session expired');
    const at = now();
    for (const state of registry.values()) {
      if (options.storedSessions && !state.principal) continue;
      if (state.openEvent && at - state.openEvent.openedAt > settings.outcomeWindowMs) flushOutcome(core, state);
    }
    await Promise.allSettled(expired.map(({ value }) => value.close({ report: !options.storedSessions || value.principal })));
    return expired.length;
  }

  return {
    openSession,
    getSession: (id) => registry.peek(id),
    modernServer,
    principalSession,
    onListsChanged(listener) {
      listsChanged.add(listener);
      return () => void listsChanged.delete(listener);
    },
    foreignRoute: (identity, method, params) => foreignRoute(core.inputRounds, principalOf(identity).id, method, params),
    touchSession: (id) => void registry.touch(id),
    get sessionCount() {
      return registry.size;
    },
    get saturated() {
      return core.admission.saturated;
    },
    sweep,
    reportStoredOutcome: (state) => flushStoredOutcome(core, state),
    outcomeWindowMs: settings.outcomeWindowMs,
    async close() {
      closing = true;
      if (timer) clearInterval(timer);
      unsubscribe();
      core.inputRounds.parked.close();
      // Stored sessions live on in the database for the other replicas (or this one's restart).
      await Promise.allSettled(registry.values().map((state) => state.close({ report: !options.storedSessions || state.principal })));
    },
  };
}
