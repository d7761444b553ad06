/**
 * @module runtime/supervisor/session-routing
 * Issue #12 "Forwarding": what a plugin sends the client (sampling, elicitation and roots
 * requests, log messages) reaches the one gateway session whose call caused it, never another.
 * Over stdio such a message carries no link to the call that caused it, so it is attributed to
 * the callers with `tools/call`s in flight on that connection: each forwarded call registers a
 * `CallClaim` on its connection while it runs. Exactly one session in flight → that session;
 * none or several → a request is refused with a clear JSON-RPC error and a log message goes to
 * Quiver's own log only. To make attribution exact for sessions that can answer requests, the
 * pool gives such a session a connection no other caller uses meanwhile (`compatible`).
 * The plugin's connection runs at the most verbose log level a caller asked for; each session
 * gets only the messages at or above its own level. A URL elicitation's later completion is
 * routed by its id (`url-elicitations.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  type Progress,
  type LoggingLevel,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../core/logger.ts';
import { MCP_APPS_CLIENT_EXTENSIONS } from '../mcp-apps-capability.ts';
import type { CallerCapabilities, CallerLink, ForwardedRequest } from './api.ts';
import type { Deadline } from './deadline.ts';
import type { Entry, Instance } from './state.ts';
import { relayElicitationComplete, rememberUrlElicitation } from './url-elicitations.ts';

export type { CallerCapabilities, CallerLink, ForwardedNotification, ForwardedRequest } from './api.ts';

/** Severity order of MCP log levels (RFC 5424), least severe first. */
export const LOG_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** How long a plugin's request may wait on the client's answer (a human filling a form). */
export const CLIENT_ANSWER_TIMEOUT_MS = 600_000;

/** One call running on a connection: who made it, and whether it needs the connection to itself. */
export interface CallClaim {
  /** The caller's session id; calls without a caller get a unique one (they count as a stranger). */
  sessionId: string;
  /** True when the caller can answer requests (sampling, elicitation, roots): no other session meanwhile. */
  exclusive: boolean;
  caller: CallerLink | undefined;
  deadline: Deadline;
  /** Requests of this call waiting on the client: the deadline stays stopped until none is left. */
  waitingOnClient?: number;
}

const claims = new WeakMap<Instance, Set<CallClaim>>();
const pauseListeners = new WeakMap<Entry, () => void>();

/**
 * Issue #24: `listener` runs when a call on one of `entry`'s connections pauses on a client that
 * answers by retrying (the pool keeps a process ready for the callers that connection blocks).
 */
export function onCallPaused(entry: Entry, listener: () => void): void {
  pauseListeners.set(entry, listener);
}
const progressRoutes = new WeakMap<Client, Map<string, (progress: Progress) => void>>();
const connectionLevels = new WeakMap<Client, LoggingLevel>();

/** The calls in flight on an instance. */
export function claimsOf(instance: Instance): ReadonlySet<CallClaim> {
  return claims.get(instance) ?? new Set();
}

/** The claim a request holds on its connection while it runs: who gets what the plugin sends meanwhile. */
export function claimFor(caller: CallerLink | undefined, deadline: Deadline): CallClaim {
  return { sessionId: caller?.sessionId ?? `call-${randomUUID()}`, exclusive: needsOwnConnection(caller), caller, deadline };
}

/** Extra SDK-level time a request of `caller` gets: room for the client's answer, during which the call's own deadline stops. */
export function answerRoomMs(caller: CallerLink | undefined): number {
  return needsOwnConnection(caller) ? CLIENT_ANSWER_TIMEOUT_MS : 0;
}

/**
 * True when a caller that declared sampling or elicitation must not share its connection.
 * Roots alone do not claim a connection: most desktop clients declare them, and with the
 * default pool of one process per plugin every such session would take turns. A plugin's
 * `roots/list` is still answered only when exactly one session is in flight on its
 * connection, and refused otherwise, so it never reaches the wrong client.
 */
export function needsOwnConnection(caller: CallerLink | undefined): boolean {
  if (!caller) return false;
  const { sampling, elicitation } = caller.capabilities;
  return sampling !== undefined || elicitation !== undefined;
}

/** Whether `claim` may run on `instance` now: no other session when either side needs exclusivity. */
export function compatible(instance: Instance, claim: CallClaim | undefined): boolean {
  if (!claim) return true;
  for (const other of claimsOf(instance)) {
    if (other.sessionId === claim.sessionId) continue;
    if (claim.exclusive) return false;
    if (other.exclusive && !pausedOnClient(other)) return false;
  }
  return true;
}

/**
 * Issue #24: a call paused on a 2026 client's input (its plugin waits for an answer that comes
 * with the client's retry, minutes later or never) does not keep calls that can never be asked
 * anything (no sampling, no elicitation) off its connection: they would otherwise wait for
 * another process to start. Fail closed: a request the plugin sends while both run is refused as
 * unattributable (`attribute`), never given to the wrong client.
 */
function pausedOnClient(claim: CallClaim): boolean {
  return claim.caller?.pauses === true && (claim.waitingOnClient ?? 0) > 0;
}

/** Registers a call on the instance (synchronously, inside the pool's decision). */
export function registerClaim(instance: Instance, claim: CallClaim): void {
  let set = claims.get(instance);
  if (!set) claims.set(instance, (set = new Set()));
  set.add(claim);
  noteRootsUser(instance, claim.caller);
}

const releaseWaiters = new WeakMap<Entry, Set<() => void>>();

/** Removes a finished call from the instance and wakes callers waiting for its plugin's connections. */
export function releaseClaim(instance: Instance, claim: CallClaim): void {
  if (!claims.get(instance)?.delete(claim)) return;
  const waiters = releaseWaiters.get(instance.entry);
  if (!waiters) return;
  releaseWaiters.delete(instance.entry);
  for (const wake of waiters) wake();
}

/**
 * Resolves when a call on one of `entry`'s connections ends, or after `maxWaitMs` (other changes,
 * such as a connection closing, are seen by the caller's next look); rejects when `signal` aborts.
 * A session waiting its turn (a form may stay open for minutes) waits on this, not on a busy loop.
 */
export function claimReleased(entry: Entry, signal: AbortSignal, maxWaitMs: number): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    let waiters = releaseWaiters.get(entry);
    if (!waiters) releaseWaiters.set(entry, (waiters = new Set()));
    const settle = (outcome: () => void): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      waiters.delete(wake);
      outcome();
    };
    const wake = (): void => settle(resolve);
    const onAbort = (): void => settle(() => reject(signal.reason));
    const timer = setTimeout(wake, maxWaitMs);
    waiters.add(wake);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

type Attribution = { claim: CallClaim & { caller: CallerLink } } | { problem: string };

/** The one session a message on this connection belongs to, or why there is none. */
export function attribute(instance: Instance): Attribution {
  const inFlight = [...claimsOf(instance)];
  const sessions = new Set(inFlight.map((claim) => claim.sessionId));
  if (inFlight.length === 0) return { problem: 'no call is in flight on this connection, so there is no client to ask' };
  if (sessions.size > 1 || instance.inFlight > inFlight.length) {
    return { problem: 'calls of several callers are in flight on this shared connection, so the client that caused this request is unknown' };
  }
  const claim = inFlight.find((item) => item.caller !== undefined);
  if (!claim?.caller) return { problem: 'the call in flight did not come from an MCP client session' };
  return { claim: claim as CallClaim & { caller: CallerLink } };
}

/** Why the caller cannot take this request and the capability it lacks, or undefined when it declared what it needs. */
function missingCapability(request: ForwardedRequest, capabilities: CallerCapabilities): { why: string; capability?: 'sampling' | 'elicitation' | 'roots' } | undefined {
  const params = request.params ?? {};
  if (params['task'] !== undefined) return { why: 'task-augmented requests from plugins are not forwarded' };
  if (request.method === 'sampling/createMessage') {
    if (!capabilities.sampling) return { why: "the client that made this call did not declare the 'sampling' capability", capability: 'sampling' };
    if ((params['tools'] !== undefined || params['toolChoice'] !== undefined) && !capabilities.sampling.tools) return { why: "the client that made this call did not declare 'sampling.tools'" };
    return undefined;
  }
  if (request.method === 'elicitation/create') {
    const elicitation = capabilities.elicitation;
    if (!elicitation) return { why: "the client that made this call did not declare the 'elicitation' capability", capability: 'elicitation' };
    const mode = params['mode'] ?? 'form';
    const declaresModes = elicitation.form !== undefined || elicitation.url !== undefined;
    // A bare `elicitation: {}` means form mode (MCP 2025-06-18).
    if (mode === 'form' && declaresModes && !elicitation.form) return { why: "the client that made this call did not declare 'elicitation.form'" };
    if (mode === 'url' && !elicitation.url) return { why: "the client that made this call did not declare 'elicitation.url'" };
    return undefined;
  }
  return capabilities.roots ? undefined : { why: "the client that made this call did not declare the 'roots' capability", capability: 'roots' };
}

/**
 * Forwards a plugin's request to the client of the call in flight, or refuses it at once. The
 * call's deadline stops while the client answers (a person may be filling a form) and starts
 * over once it has; the wait itself is bounded by `CLIENT_ANSWER_TIMEOUT_MS`.
 */
export async function forwardRequest(instance: Instance, request: ForwardedRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
  const refuse = (why: string): McpError => new McpError(ErrorCode.InvalidRequest, `Quiver cannot forward ${request.method} from plugin '${instance.entry.spec.pluginName}': ${why}`);
  const target = attribute(instance);
  if ('problem' in target) {
    // Issue #24: a call sharing the connection of a call paused on a 2026 client cannot answer
    // what it did not declare; told so, it ends as -32021 if it then fails (as when alone).
    for (const claim of claimsOf(instance)) {
      if (!claim.caller || pausedOnClient(claim)) continue;
      const capability = missingCapability(request, claim.caller.capabilities)?.capability;
      if (capability) claim.caller.refused?.(capability);
    }
    throw refuse(target.problem);
  }
  const { claim } = target;
  const missing = missingCapability(request, claim.caller.capabilities);
  if (missing) {
    if (missing.capability) claim.caller.refused?.(missing.capability);
    throw refuse(missing.why);
  }
  const elicitationId = request.params?.['mode'] === 'url' ? request.params['elicitationId'] : undefined;
  // Before asking: the plugin may send its completion as soon as the client has answered.
  if (typeof elicitationId === 'string') rememberUrlElicitation(instance, elicitationId, claim.caller);
  claim.waitingOnClient = (claim.waitingOnClient ?? 0) + 1;
  claim.deadline.pause();
  if (claim.caller.pauses) pauseListeners.get(instance.entry)?.();
  const both = AbortSignal.any([signal, claim.deadline.signal]);
  try {
    return await claim.caller.request(request, { signal: both });
  } finally {
    claim.waitingOnClient -= 1;
    if (claim.waitingOnClient === 0) claim.deadline.restart();
  }
}

/** Forwards a plugin's log message to the one session in flight (at its level), else to Quiver's log. */
export function forwardLog(instance: Instance, params: LoggingMessageNotification['params'], logger: Logger): void {
  const { pluginName } = instance.entry.spec;
  // Forwarded messages name the plugin: `logger` is the plugin name, or `plugin/logger`.
  const named = params.logger && params.logger !== pluginName ? `${pluginName}/${params.logger}` : pluginName;
  const target = attribute(instance);
  if ('problem' in target) {
    logger.info({ pluginName, level: params.level, logger: named, data: instance.entry.redact(JSON.stringify(params.data ?? null)) }, 'plugin log message (not forwarded: no single session in flight)');
    return;
  }
  const wanted = target.claim.caller.logLevel();
  if (wanted && LOG_LEVELS.indexOf(params.level) < LOG_LEVELS.indexOf(wanted)) return;
  target.claim.caller.notify({ method: 'notifications/message', params: { ...params, logger: named } }).catch((error: unknown) => {
    logger.debug({ pluginName, err: error }, 'forwarding a plugin log message failed');
  });
}

/**
 * Before a call: the plugin's connection logs at the most verbose level any caller asked for
 * (lowered, never raised again while the connection lives). Plugins without `logging` are
 * skipped, and a plugin that refuses the level still gets the call.
 */
export async function syncLogLevel(client: Client, caller: CallerLink | undefined, options: { signal: AbortSignal; timeout: number }): Promise<void> {
  const wanted = caller?.logLevel();
  if (!wanted || !client.getServerCapabilities()?.logging) return;
  const current = connectionLevels.get(client);
  if (current && LOG_LEVELS.indexOf(current) <= LOG_LEVELS.indexOf(wanted)) return;
  connectionLevels.set(client, wanted);
  try {
    await client.setLoggingLevel(wanted, options);
  } catch (error) {
    // Fail open: a plugin refusing a log level must not fail the call; the session filters anyway.
    if (options.signal.aborted) throw error;
  }
}

/** Installs the handlers that route a connection's server→client traffic (once per connection). */
export function attachSessionRouting(instance: Instance, logger: Logger): void {
  const client = instance.connection?.client;
  if (!client) return;
  // A 2026-07-28 plugin's input request carries its own key (modern-client.ts puts it in `extra`).
  const keyOf = (extra: object): { key?: string } => {
    const key = (extra as { inputKey?: unknown }).inputKey;
    return typeof key === 'string' ? { key } : {};
  };
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) =>
    (await forwardRequest(instance, { method: request.method, params: request.params, ...keyOf(extra) }, extra.signal)) as never,
  );
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) =>
    (await forwardRequest(instance, { method: request.method, params: request.params, ...keyOf(extra) }, extra.signal)) as never,
  );
  client.setRequestHandler(ListRootsRequestSchema, async (request, extra) =>
    (await forwardRequest(instance, { method: request.method, params: request.params, ...keyOf(extra) }, extra.signal)) as never,
  );
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => forwardLog(instance, notification.params, logger));
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (notification) => relayElicitationComplete(instance, notification.params, logger));
  // Replaces the SDK's own progress routing, which drops a notification read in the same chunk as
  // its call's response (the response removes the handler before the notification is handled).
  client.setNotificationHandler(ProgressNotificationSchema, async (notification) => {
    const { progressToken, ...progress } = notification.params;
    progressRoutes.get(client)?.get(String(progressToken))?.(progress);
  });
}

/**
 * Runs `work` with a progress token of Quiver's own routed to `onProgress` (issue #12: the plugin
 * never sees the client's token, and two calls never share one); the route outlives the response
 * by the turn in which notifications read with it are handled.
 */
export async function withProgressToken<T>(client: Client, onProgress: ((progress: Progress) => void) | undefined, work: (token: string | undefined) => Promise<T>): Promise<T> {
  if (!onProgress) return work(undefined);
  const token = `quiver-${randomUUID()}`;
  let routes = progressRoutes.get(client);
  if (!routes) progressRoutes.set(client, (routes = new Map()));
  routes.set(token, onProgress);
  try {
    return await work(token);
  } finally {
    setImmediate(() => routes.delete(token));
  }
}

/** `_meta` carrying a progress token of Quiver's own, or nothing (spread into a request's params). */
export function progressMeta(token: string | undefined): { _meta?: { progressToken: string } } {
  return token ? { _meta: { progressToken: token } } : {};
}

/** The `_meta` key of the client capabilities a 2026-07-28 request carries. */
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/**
 * Issue #24: a request to a 2026-07-28 plugin carries the capabilities of the client that made
 * the call (what the plugin may ask it: its input requests come back to that client), not
 * Quiver's own; a 2025 plugin learns capabilities at `initialize` only, so its params stay.
 */
export function withCallerCapabilities<P extends { _meta?: Record<string, unknown> }>(params: P, caller: CallerLink | undefined, era: 'legacy' | 'modern'): P {
  if (era !== 'modern') return params;
  const declared = caller?.capabilities ?? {};
  const capabilities = {
    ...(declared.sampling ? { sampling: declared.sampling } : {}),
    ...(declared.elicitation ? { elicitation: declared.elicitation } : {}),
    ...(declared.roots ? { roots: declared.roots } : {}),
    // MCP Apps: Quiver passes views through whatever the caller is (as declared at discovery).
    extensions: MCP_APPS_CLIENT_EXTENSIONS,
  };
  return { ...params, _meta: { ...params._meta, [CLIENT_CAPABILITIES_KEY]: capabilities } };
}

/** Tells every connection a session has used that its client's roots changed (`notifications/roots/list_changed`). */
export async function notifyRootsChanged(instances: readonly Instance[], sessionId: string, logger: Logger): Promise<void> {
  const targets = instances.filter((instance) => rootsUsers.get(instance)?.has(sessionId) && instance.connection?.isOpen());
  await Promise.allSettled(
    targets.map((instance) =>
      instance.connection!.client.sendRootsListChanged().catch((error: unknown) => {
        logger.debug({ pluginName: instance.entry.spec.pluginName, err: error }, 'forwarding roots/list_changed failed');
      }),
    ),
  );
}

const rootsUsers = new WeakMap<Instance, Set<string>>();
const ROOTS_USERS_LIMIT = 1_000;

/** Remembers that a session offering roots used this connection (for its later list_changed). */
export function noteRootsUser(instance: Instance, caller: CallerLink | undefined): void {
  if (!caller?.capabilities.roots?.listChanged) return;
  let set = rootsUsers.get(instance);
  if (!set) rootsUsers.set(instance, (set = new Set()));
  set.delete(caller.sessionId);
  set.add(caller.sessionId);
  // Oldest first: a long-lived connection forgets sessions long gone.
  if (set.size > ROOTS_USERS_LIMIT) set.delete(set.values().next().value!);
}
