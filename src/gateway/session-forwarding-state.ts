/**
 * @module gateway/session-forwarding-state
 * The per-session forwarding state a stored session (issue #16) carries to another replica: the
 * `logging/setLevel` level (issue #12 forwarding) and the subscribed resource URIs, kept in the
 * row's `extensions` bag under `forwarding`. A restored copy takes the level and subscribes
 * upstream again, so the level applies and resource updates reach the client wherever its
 * requests land. A malformed value is ignored (fail open: the session just forwards everything).
 */
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { LoggingLevelSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../core/logger.ts';
import { sessionLogLevel, setSessionLogLevel } from './client-forwarding.ts';
import { reconcileSubscriptions, subscribedUris } from './resource-subscriptions.ts';
import type { GatewaySession, SessionState } from './session-state.ts';

/** The name of the extension in `mcp_sessions.extensions`. */
export const FORWARDING_EXTENSION = 'forwarding';

/** What is stored: absent fields mean the default (every message, no subscriptions). */
export interface ForwardingState {
  logLevel?: LoggingLevel;
  subscriptions?: string[];
}

// Every GatewaySession the gateway hands out is its SessionState.
const stateOf = (session: GatewaySession) => session as SessionState;

/** The session's forwarding state now, or null when it is all defaults (the extension is removed). */
export function forwardingStateOf(session: GatewaySession): ForwardingState | null {
  const state = stateOf(session);
  const logLevel = sessionLogLevel(state);
  const subscriptions = subscribedUris(state);
  if (logLevel === undefined && subscriptions.length === 0) return null;
  return { ...(logLevel !== undefined ? { logLevel } : {}), ...(subscriptions.length > 0 ? { subscriptions } : {}) };
}

function parse(value: unknown): ForwardingState {
  if (value === null || typeof value !== 'object') return {};
  const raw = value as Record<string, unknown>;
  const level = LoggingLevelSchema.safeParse(raw.logLevel);
  const subscriptions = Array.isArray(raw.subscriptions) ? raw.subscriptions.filter((uri): uri is string => typeof uri === 'string') : [];
  return { ...(level.success ? { logLevel: level.data } : {}), subscriptions };
}

/** Applies a stored forwarding state to this replica's copy: the level, and the subscriptions upstream. */
export async function applyForwardingState(session: GatewaySession, stored: unknown, logger: Logger): Promise<void> {
  const state = stateOf(session);
  const wanted = parse(stored);
  setSessionLogLevel(state, wanted.logLevel);
  await reconcileSubscriptions(state, wanted.subscriptions ?? [], logger);
}
