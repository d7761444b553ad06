/**
 * @module gateway/session-state
 * One client's MCP session and what every gateway part shares: `GatewayCore` (backend,
 * settings, registry, admission, validators) and `SessionState` (its own MCP `Server`, tool
 * context, iteration guard, search history, suspended tools and the open selection event).
 * Also the selection feedback a session reports: a search's outcome (flushed at the next
 * search, at close or by the sweep) and each call. Request handlers are installed by
 * `installRequestHandlers`, not here, so this module depends on no handler.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../core/logger.ts';
import type { Admission } from './admission.ts';
import type { BackendSession, CatalogOverview, ExposureMode, GatewayBackend, GatewayTool, SessionIdentity } from './backend.ts';
import { sendBareErrorMessages } from './errors.ts';
import type { GatewaySettings } from './gateway-settings.ts';
import { IterationGuard, type IterationGuardSnapshot } from './iteration-guard.ts';
import { SearchHistory, type SearchHistorySnapshot } from './search-history.ts';
import type { SessionRegistry } from './session-registry.ts';
import { ToolContext, snapshotEntryName, type ToolContextSnapshot } from './tool-context.ts';
import type { ValidatorCache } from './argument-validators.ts';
import type { InputRounds } from './mrtr/input-rounds.ts';
import { sessionServerClass } from './sdk-servers.ts';

/** One client's MCP session. */
export interface GatewaySession {
  readonly id: string;
  readonly identity: SessionIdentity;
  readonly mode: ExposureMode;
  /** The session's MCP server; connect it to exactly one transport. */
  readonly server: Server;
  /** Connects the session's server to a transport. */
  connect(transport: Transport): Promise<void>;
  /**
   * Closes the server and transport and records the open outcome; with `report: false` only
   * this process's copy goes (another replica or the collect job reports). Safe to call twice.
   */
  close(options?: { report?: boolean }): Promise<void>;
  /** Resolves once the session is closed (by either side). */
  readonly closed: Promise<void>;
  /** Qualified names of the tools bound right now (meta-tools excluded). */
  boundTools(): string[];
  /** What another replica needs to carry the session on (issue #16), as JSON-safe data. */
  snapshot(): SessionSnapshot;
  /**
   * Takes over a snapshot's state (a copy another replica changed); a malformed one is ignored.
   * The bound tools' definitions are looked up as they are now (the snapshot holds names).
   */
  restore(snapshot: unknown): Promise<void>;
}

/** A session's state as plain data: what `mcp_sessions.state` holds (issue #16). */
export interface SessionSnapshot {
  v: 1;
  tools: ToolContextSnapshot;
  guard: IterationGuardSnapshot;
  history: SearchHistorySnapshot;
  suspended: string[];
  openEvent?: { eventId: string; openedAt: number; calls: Array<{ name: string; success: boolean }>; flagged?: string[] };
}

/** True when `value` has the shape of a `SessionSnapshot` (rows are checked before use). */
export function isSessionSnapshot(value: unknown): value is SessionSnapshot {
  if (value === null || typeof value !== 'object') return false;
  const snapshot = value as Partial<SessionSnapshot>;
  return (
    snapshot.v === 1 &&
    Array.isArray(snapshot.tools?.discovered) &&
    Array.isArray(snapshot.guard?.times) &&
    Array.isArray(snapshot.guard?.window) &&
    Array.isArray(snapshot.history) &&
    Array.isArray(snapshot.suspended)
  );
}

/** What the gateway's parts share: one per gateway. */
export interface GatewayCore {
  backend: GatewayBackend;
  logger: Logger;
  now: () => number;
  settings: GatewaySettings;
  registry: SessionRegistry<SessionState>;
  admission: Admission;
  validators: ValidatorCache;
  /** Issue #24: calls of 2026-07-28 clients paused on the client's input (MRTR). */
  inputRounds: InputRounds;
}

/** The selection event of a session's last search and the calls made since. */
export interface OpenEvent {
  eventId: string;
  openedAt: number;
  calls: Array<{ name: string; success: boolean }>;
  /** Tools the iteration guard flagged since the search: never learned from (issue #13). */
  flagged?: Set<string>;
}

/** Sends a notification on the request being answered (or, without one, on the server). */
export type SendNotification = (notification: ServerNotification) => Promise<void>;

/** A live session: its server, bound tools, guard and feedback state. */
export class SessionState implements GatewaySession {
  readonly id: string;
  readonly identity: SessionIdentity;
  readonly backendSession: BackendSession;
  readonly mode: ExposureMode;
  readonly server: Server;
  readonly context: ToolContext<GatewayTool>;
  readonly guard: IterationGuard;
  readonly history: SearchHistory;
  /** Tools the guard removed (discovered or always-include): hidden until the next search (§7.5). */
  readonly suspended = new Set<string>();
  /** Issue #12: tools, prompts and resources shown under their plugins' own names where unambiguous. */
  nativeNames = false;
  /** Issue #24: the state of a principal's 2026-07-28 requests, not of a protocol session (never stored). */
  principal = false;
  overview: CatalogOverview = { toolCount: 0, plugins: [] };
  openEvent: OpenEvent | undefined;
  readonly closed: Promise<void>;
  readonly #core: GatewayCore;
  #resolveClosed!: () => void;
  #closing = false;

  /** The gateway this state answers with (issue #24: the HTTP front's header checks use it before a request's body is read). */
  get core(): GatewayCore {
    return this.#core;
  }

  /** A new session's state; the 1.x SDK's `Server` loads with the first one (issue #28: idle memory). */
  static async open(core: GatewayCore, identity: SessionIdentity, id: string, mode: ExposureMode, instructions: string): Promise<SessionState> {
    return new SessionState(await sessionServerClass(), core, identity, id, mode, instructions);
  }

  private constructor(ServerClass: typeof Server, core: GatewayCore, identity: SessionIdentity, id: string, mode: ExposureMode, instructions: string) {
    const { settings, logger, now } = core;
    this.#core = core;
    this.id = id;
    this.identity = Object.freeze({ ...identity });
    // Frozen down to its roles: the selection engine then checks its context once, not on every call (issue #28).
    this.backendSession = Object.freeze({ ...identity, roles: Object.freeze([...identity.roles]), sessionId: id });
    this.mode = mode;
    this.context = new ToolContext<GatewayTool>({ capacity: settings.capacity, ttlMs: settings.ttlMs, now });
    this.guard = new IterationGuard({ ...settings.guardOptions, now });
    this.history = new SearchHistory({ ...settings.redundancy, now });
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    this.server = new ServerClass(settings.serverInfo, {
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true } },
      instructions,
    });
    this.server.onclose = () => void this.close();
    this.server.onerror = (error) => logger.debug({ err: error, sessionId: id }, 'session transport error');
    sendBareErrorMessages(this.server);
  }

  async connect(transport: Transport): Promise<void> {
    await this.server.connect(transport);
  }

  boundTools(): string[] {
    return this.context.list().filter((tool) => !this.suspended.has(tool.qualifiedName)).map((tool) => tool.qualifiedName);
  }

  snapshot(): SessionSnapshot {
    const event = this.openEvent;
    return {
      v: 1,
      tools: this.context.snapshot(),
      guard: this.guard.snapshot(),
      history: this.history.snapshot(),
      suspended: [...this.suspended],
      ...(event
        ? { openEvent: { eventId: event.eventId, openedAt: event.openedAt, calls: event.calls.map((call) => ({ ...call })), ...(event.flagged?.size ? { flagged: [...event.flagged] } : {}) } }
        : {}),
    };
  }

  async restore(snapshot: unknown): Promise<void> {
    if (!isSessionSnapshot(snapshot)) {
      this.#core.logger.warn({ sessionId: this.id }, 'ignoring a malformed stored session state');
      return;
    }
    const definitions = await this.#definitions(snapshot.tools.discovered.map(snapshotEntryName));
    this.context.restore(snapshot.tools, (name) => definitions.get(name));
    this.guard.restore(snapshot.guard);
    this.history.restore(snapshot.history);
    this.suspended.clear();
    for (const name of snapshot.suspended) this.suspended.add(name);
    const event = snapshot.openEvent;
    this.openEvent = event
      ? { eventId: event.eventId, openedAt: event.openedAt, calls: event.calls.map((call) => ({ ...call })), ...(event.flagged ? { flagged: new Set(event.flagged) } : {}) }
      : undefined;
  }

  /** The current definitions of bound tools by name; one the session may no longer see is left out. */
  async #definitions(names: Array<string | undefined>): Promise<Map<string, GatewayTool>> {
    const found = new Map<string, GatewayTool>();
    await Promise.all(
      names.map(async (name) => {
        if (name === undefined || this.context.isAlwaysIncluded(name)) return;
        try {
          const tool = await this.#core.backend.getTool(this.backendSession, name);
          if (tool) found.set(name, tool);
        } catch (error) {
          // Quarantined or otherwise refused now: the session no longer holds it.
          this.#core.logger.debug({ err: error, sessionId: this.id, tool: name }, 'a bound tool of a stored session is not restored');
        }
      }),
    );
    return found;
  }

  async close(options: { report?: boolean } = {}): Promise<void> {
    if (this.#closing) return this.closed;
    this.#closing = true;
    const { registry, logger } = this.#core;
    registry.delete(this.id);
    if (options.report === false) this.openEvent = undefined;
    flushOutcome(this.#core, this);
    try {
      await this.server.close();
    } catch (error) {
      logger.debug({ err: error, sessionId: this.id }, 'closing session transport failed');
    }
    logger.debug({ sessionId: this.id }, 'session closed');
    this.#resolveClosed();
  }
}

/** Reports the open search's outcome (tools called, all succeeded) once; feedback never throws. */
export function flushOutcome(core: GatewayCore, state: SessionState): void {
  const event = state.openEvent;
  if (!event) return;
  state.openEvent = undefined;
  reportOutcome(core, event.eventId, event.calls, [...(event.flagged ?? [])]);
}

/** Tools called, all succeeded, tools the guard flagged: one outcome report; never throws. */
function reportOutcome(core: Pick<GatewayCore, 'backend' | 'logger'>, eventId: string, calls: ReadonlyArray<{ name: string; success: boolean }>, flaggedTools: string[]): void {
  const toolsCalled = [...new Set(calls.map((call) => call.name))];
  const success = calls.length > 0 && calls.every((call) => call.success);
  core.backend
    .recordOutcome(eventId, { toolsCalled, success, ...(flaggedTools.length > 0 ? { flaggedTools } : {}) })
    .catch((error: unknown) => core.logger.warn({ err: error, eventId }, 'recording a selection outcome failed'));
}

/**
 * Reports the open outcome found in a stored session's state (or a bare `openEvent`) that no
 * replica holds any more: the session expired, was pushed out by its owner's limit, or its
 * outcome window passed. Anything malformed is ignored.
 */
export function flushStoredOutcome(core: Pick<GatewayCore, 'backend' | 'logger'>, state: unknown): void {
  const event = (state as { openEvent?: SessionSnapshot['openEvent'] } | null)?.openEvent;
  if (!event || typeof event.eventId !== 'string' || !Array.isArray(event.calls)) return;
  reportOutcome(core, event.eventId, event.calls, Array.isArray(event.flagged) ? event.flagged : []);
}

/** Reports one tool call (latency since `started`, a `performance.now()` reading); never throws. */
export function recordCall(core: GatewayCore, state: SessionState, name: string, success: boolean, started: number, errorCode?: string): void {
  const latencyMs = performance.now() - started;
  core.backend
    .recordCall(state.backendSession, { qualifiedName: name, success, latencyMs, ...(errorCode ? { errorCode } : {}) })
    .catch((error: unknown) => core.logger.warn({ err: error, tool: name }, 'recording a call failed'));
}
