/**
 * @module runtime/supervisor/requests
 * Running one request on a pooled connection: the deadline is paused while the pool starts a
 * plugin and restarted once a connection is in hand, the connection counts the request as in
 * flight (no idle stop meanwhile), failures become QuiverErrors, and a request that timed out
 * makes the lifecycle check whether the process is hung. The list/read/get requests are this
 * plus their MCP method; `tools/call` adds its guards in `call-tool.ts`.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { sleep } from '../process-tree.ts';
import type { Clock, UpstreamSpecInput } from '../types.ts';
import { listAllTools, type UpstreamConnection } from '../upstream-connection.ts';
import type { CallOptions } from './api.ts';
import { classifyFailure } from './classify.ts';
import { createDeadline, type Deadline } from './deadline.ts';
import type { InstanceLifecycle } from './lifecycle.ts';
import type { Pool } from './pool.ts';
import { answerRoomMs, claimFor, releaseClaim, syncLogLevel, withProgressToken, type CallClaim } from './session-routing.ts';
import type { EntryRegistry } from './registry.ts';
import { requestTimeoutMs, type SupervisorSettings } from './settings.ts';
import type { Entry, Gate, Instance } from './state.ts';

/** A request to run on a connection; `remaining` is the deadline's time left plus a second of slack. */
export type ConnectionRequest<T> = (connection: UpstreamConnection, signal: AbortSignal, remaining: () => number) => Promise<T>;

/** How a forwarded request is sent: its signal, an SDK timeout with room for the client's answers, and Quiver's own progress token (if asked for). */
export interface ForwardedRequestOptions {
  signal: AbortSignal;
  timeout: number;
  progressToken: string | undefined;
}

/** Runs requests on pooled connections. */
export interface Requests {
  /** Runs `request` on a pooled connection of `entry` within `deadline`, mapping errors; a `claim` holds the connection for its caller (session-routing). */
  onConnection<T>(entry: Entry, deadline: Deadline, what: string, request: ConnectionRequest<T>, claim?: CallClaim): Promise<T>;
  /** A tool's MCP annotations, listing the tools once per settings when not known yet. */
  annotationsFor(entry: Entry, tool: string, deadline: Deadline): Promise<Tool['annotations'] | undefined>;
  /** Resolves the entry, gives the request its own deadline and runs it (no breakers, no retries). */
  simple<T>(spec: UpstreamSpecInput, what: string, callOptions: CallOptions, request: (entry: Entry) => ConnectionRequest<T>): Promise<T>;
  /**
   * `simple` for a session's request that the plugin may answer with its own traffic (issue #12:
   * resources/read, prompts/get, completion/complete): the connection's log level first, and a
   * progress token of Quiver's own when the caller asked for progress.
   */
  forwarded<T>(spec: UpstreamSpecInput, what: string, callOptions: CallOptions, request: (connection: UpstreamConnection, options: ForwardedRequestOptions) => Promise<T>): Promise<T>;
}

/** What requests need from the supervisor. */
export interface RequestsOptions {
  settings: Pick<SupervisorSettings, 'defaultTimeoutMs'>;
  clock: Clock;
  gate: Gate;
  registry: Pick<EntryRegistry, 'resolve'>;
  pool: Pool;
  lifecycle: Pick<InstanceLifecycle, 'scheduleIdle' | 'checkAfterTimeout'>;
}

/** Creates the request runner. */
export function createRequests(options: RequestsOptions): Requests {
  const { settings, clock, gate, registry, pool, lifecycle } = options;

  async function onConnection<T>(entry: Entry, deadline: Deadline, what: string, request: ConnectionRequest<T>, claim?: CallClaim): Promise<T> {
    let instance: Instance | undefined;
    // Every request holds a claim, also Quiver's own (a tools/list for annotations, an API read
    // without a session): a stranger never joins the connection of a session that has it to
    // itself, where it would make that session's sampling or elicitation unattributable.
    const held = claim ?? claimFor(undefined, deadline);
    try {
      deadline.pause();
      instance = await pool.acquire(entry, deadline.signal, held);
      deadline.restart();
      instance.inFlight += 1;
      instance.lastUsedAt = clock.now();
      if (instance.idleTimer) clearTimeout(instance.idleTimer);
      return await request(instance.connection!, deadline.signal, () => deadline.remaining() + 1_000);
    } catch (error) {
      // Let the connection's close handler record why it ended before classifying.
      if (instance && !instance.connection?.isOpen()) await sleep(0);
      const classified = classifyFailure({ spec: entry.spec, redact: entry.redact, what, signal: deadline.signal, instance }, error);
      if (instance && deadline.timedOut()) lifecycle.checkAfterTimeout(instance);
      throw classified;
    } finally {
      if (instance) {
        releaseClaim(instance, held);
        instance.inFlight -= 1;
        instance.lastUsedAt = clock.now();
        lifecycle.scheduleIdle(instance);
      }
    }
  }

  /** One `tools/list` per entry at a time: the first calls after a start all wait on the same listing. */
  const listings = new WeakMap<Entry, Promise<Map<string, Tool['annotations']>>>();

  async function annotationsFor(entry: Entry, tool: string, deadline: Deadline): Promise<Tool['annotations'] | undefined> {
    if (entry.annotations) return entry.annotations.get(tool);
    let listing = listings.get(entry);
    if (!listing) {
      listing = onConnection(entry, deadline, 'tools/list', (connection, signal, remaining) => listAllTools(connection.client, { timeoutMs: remaining(), signal }))
        .then((tools) => (entry.annotations = new Map(tools.map((item) => [item.name, item.annotations]))))
        .finally(() => listings.delete(entry));
      listings.set(entry, listing);
    }
    return (await listing).get(tool);
  }

  async function simple<T>(spec: UpstreamSpecInput, what: string, callOptions: CallOptions, request: (entry: Entry) => ConnectionRequest<T>): Promise<T> {
    gate.ensureOpen();
    const entry = registry.resolve(spec);
    if (entry.crashes.inLoop()) throw entry.crashes.loopError();
    const deadline = createDeadline(entry.spec, what, requestTimeoutMs(entry.spec, settings, callOptions.timeoutMs), callOptions.signal, clock);
    try {
      // Issue #12: a gateway session's read or prompt holds its connection like a tools/call does.
      return await onConnection(entry, deadline, what, request(entry), callOptions.caller ? claimFor(callOptions.caller, deadline) : undefined);
    } finally {
      deadline.dispose();
    }
  }

  function forwarded<T>(spec: UpstreamSpecInput, what: string, callOptions: CallOptions, request: (connection: UpstreamConnection, options: ForwardedRequestOptions) => Promise<T>): Promise<T> {
    return simple(spec, what, callOptions, () => async (connection, signal, remaining) => {
      await syncLogLevel(connection.client, callOptions.caller, { signal, timeout: remaining() });
      return withProgressToken(connection.client, callOptions.onProgress, (progressToken) =>
        request(connection, { signal, timeout: remaining() + answerRoomMs(callOptions.caller), progressToken }),
      );
    });
  }

  return { onConnection, annotationsFor, simple, forwarded };
}
