/**
 * @module runtime/supervisor/state
 * What the supervisor's parts share: an `Entry` per plugin version (its settings, its pool of
 * instances, crash record, breakers, limiters and statistics), an `Instance` per connection
 * (one process or remote session), and the gate that turns every request away once closed.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import type { CallWindow } from '../health.ts';
import type { Redactor } from '../redact.ts';
import type { LaunchDescription } from '../sandbox.ts';
import type { UpstreamSpec } from '../types.ts';
import type { ProtocolEra, UpstreamConnection } from '../upstream-connection.ts';
import type { PluginBreakers } from './breakers.ts';
import type { CallLimits } from './call-limits.ts';
import type { CrashHistory } from './crash-history.ts';

/** One connection of a plugin version: starting, ready for requests, or stopping. */
export interface Instance {
  entry: Entry;
  state: 'starting' | 'ready' | 'stopping';
  /** Settles when the connection is up (or failed to come up). */
  ready: Promise<UpstreamConnection>;
  connection: UpstreamConnection | undefined;
  /** Requests running on the connection now (each holds a `CallClaim`, session-routing). */
  inFlight: number;
  /**
   * What keeps the connection alive between requests: resource subscriptions and tool tasks
   * held on it. Not requests: a plugin request meanwhile is still attributed by the claims.
   */
  holds: number;
  lastUsedAt: number;
  idleTimer: NodeJS.Timeout | undefined;
  /** Why the connection ended, as its transport reported it. */
  endReason: string | undefined;
  /** Settings changed: stop as soon as no request is in flight, take no new ones. */
  retire: boolean;
  /** `notifications/tools/list_changed` received from this process (tool pinning re-screens on a change, issue #10). */
  toolListChanges: number;
}

/** Everything the supervisor keeps about one plugin version (`pluginId@version`). */
export interface Entry {
  key: string;
  spec: UpstreamSpec;
  fingerprint: string;
  redact: Redactor;
  instances: Instance[];
  crashes: CrashHistory;
  breakers: PluginBreakers;
  limits: CallLimits;
  window: CallWindow;
  totals: { calls: number; failures: number };
  /** Tool annotations from the last `tools/list`, to know which tools may be retried. */
  annotations: Map<string, Tool['annotations']> | undefined;
  lastLaunch: LaunchDescription | undefined;
  lastStartedAt: number | undefined;
  /** The protocol era this version's processes spoke (issue #24): later connections go straight to it. */
  protocolEra?: ProtocolEra | undefined;
}

/** Open until `close()`; afterwards every request fails with `unavailable`. */
export interface Gate {
  isClosed(): boolean;
  /** Throws the closed error once closed. */
  ensureOpen(): void;
  /** Closes; false when it already was. */
  close(): boolean;
}

/** The error of every request after `close()`. */
export function closedError(): QuiverError {
  return new QuiverError(ErrorCodes.unavailable, 'the plugin supervisor is closed', { details: { reason: 'closed' } });
}

/** Creates an open gate. */
export function createGate(): Gate {
  let closed = false;
  return {
    isClosed: () => closed,
    ensureOpen() {
      if (closed) throw closedError();
    },
    close() {
      if (closed) return false;
      closed = true;
      return true;
    },
  };
}

/** True while the connection has requests in flight or something holding it open: never stopped as idle or retired meanwhile. */
export function inUse(instance: Instance): boolean {
  return instance.inFlight > 0 || instance.holds > 0;
}
