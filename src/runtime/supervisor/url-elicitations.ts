/**
 * @module runtime/supervisor/url-elicitations
 * Issue #12 "Forwarding", URL-mode elicitation (MCP 2025-11-25): a plugin's
 * `notifications/elicitation/complete` names an `elicitationId` it sent earlier in an
 * `elicitation/create`, often after the call that asked has ended, so it cannot be attributed
 * by the calls in flight. Each forwarded URL elicitation is remembered per connection with the
 * session it went to; the completion goes to that session only. An id Quiver never forwarded,
 * one already completed or expired, or one the plugin gave to two sessions, is dropped.
 */
import type { ElicitationCompleteNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../core/logger.ts';
import type { CallerLink } from './api.ts';
import type { Instance } from './state.ts';

/** How long a forwarded URL elicitation may still be completed (a person may take a while at that URL). */
export const URL_ELICITATION_TTL_MS = 60 * 60 * 1000;
/** Most URL elicitations remembered per connection; the oldest are forgotten first. */
const PER_CONNECTION_LIMIT = 1_000;

/** The session an elicitation went to; `undefined` caller: the plugin reused the id for another session. */
interface Pending {
  caller: CallerLink | undefined;
  expiresAt: number;
}

const pendingByInstance = new WeakMap<Instance, Map<string, Pending>>();

/** Remembers that the URL elicitation `elicitationId` on this connection went to `caller`. */
export function rememberUrlElicitation(instance: Instance, elicitationId: string, caller: CallerLink, now = Date.now()): void {
  let pending = pendingByInstance.get(instance);
  if (!pending) pendingByInstance.set(instance, (pending = new Map()));
  const earlier = pending.get(elicitationId);
  // Fail closed: an id the plugin gave to two sessions belongs to neither.
  const owner = earlier && earlier.expiresAt > now && earlier.caller?.sessionId !== caller.sessionId ? undefined : caller;
  pending.delete(elicitationId);
  pending.set(elicitationId, { caller: owner, expiresAt: now + URL_ELICITATION_TTL_MS });
  if (pending.size > PER_CONNECTION_LIMIT) pending.delete(pending.keys().next().value!);
}

/** Relays a plugin's `notifications/elicitation/complete` to the session that got the elicitation, or drops it. */
export function relayElicitationComplete(instance: Instance, params: ElicitationCompleteNotification['params'], logger: Logger, now = Date.now()): void {
  const pending = pendingByInstance.get(instance);
  const found = pending?.get(params.elicitationId);
  pending?.delete(params.elicitationId);
  const pluginName = instance.entry.spec.pluginName;
  if (!found?.caller || found.expiresAt <= now) {
    const why = !found ? 'unknown elicitation id' : found.caller ? 'expired' : 'the plugin gave this id to more than one session';
    logger.debug({ pluginName, elicitationId: params.elicitationId, why }, 'elicitation/complete dropped');
    return;
  }
  // Only the id: the plugin's `_meta` may name its own requests or tasks.
  found.caller.notify({ method: 'notifications/elicitation/complete', params: { elicitationId: params.elicitationId } }).catch((error: unknown) => {
    logger.debug({ pluginName, err: error }, 'forwarding elicitation/complete failed');
  });
}
