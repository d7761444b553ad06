/**
 * @module rollouts/routing
 * Which slot serves a call during a rollout. The choice is a pure function of the rollout, the
 * session and the step's canary percent: every replica computes the same answer without asking
 * anyone, and since the percent only changes at a step boundary, an MCP session keeps its slot
 * for the whole step (no version flip inside a multi-step task). Buckets are stable across
 * steps, so a session on the canary at 10 % stays on it at 50 %.
 */
import { createHash } from 'node:crypto';

/**
 * The session's bucket in [0, 100) for one plugin (SHA-256 of plugin id and session key): the
 * same for every rollout of the plugin, so a session is consistently early or late to new versions.
 */
export function bucketOf(pluginId: string, sessionKey: string): number {
  const digest = createHash('sha256').update(pluginId).update('\0').update(sessionKey).digest();
  return (digest.readUInt32BE(0) / 0x1_0000_0000) * 100;
}

/** What the router knows of one plugin's running rollout. */
export interface RouteState {
  rolloutId: string;
  pluginId: string;
  /** Canary share of the current step (held while paused; 0 while verifying). */
  canaryPercent: number;
  /** Tools the canary version serves: a tool missing there goes to the stable slot. */
  canaryTools: ReadonlySet<string>;
}

/** True when this call goes to the canary slot. */
export function routesToCanary(state: RouteState, sessionKey: string, toolName: string): boolean {
  if (state.canaryPercent <= 0 || !state.canaryTools.has(toolName)) return false;
  if (state.canaryPercent >= 100) return true;
  return bucketOf(state.pluginId, sessionKey) < state.canaryPercent;
}
