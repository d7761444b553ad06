/**
 * @module rollouts/routing
 * Which slot serves a call during a rollout. The choice is a pure function of the rollout, the
 * session and the step's canary percent: every replica computes the same answer without asking
 * anyone, and since the percent only changes at a step boundary, an MCP session keeps its slot
 * for the whole step (no version flip inside a multi-step task). Buckets are stable across
 * steps, so a session on the canary at 10 % stays on it at 50 %.
 */
import { createHash } from 'node:crypto';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';

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
  /** Resources, templates and prompts it serves as the active slot declares them (issue #29); absent: none. */
  canaryResources?: ReadonlySet<string>;
  canaryTemplates?: readonly string[];
  canaryPrompts?: ReadonlySet<string>;
}

/**
 * What a request asks of a plugin (issue #29): a tool call, a resource (read, subscribe, or a
 * completion of its template's argument) or a prompt (get, or a completion of its argument).
 */
export type SlotTarget = { kind: 'tool'; name: string } | { kind: 'resource'; uri: string } | { kind: 'prompt'; name: string };

/** A resource URI the canary serves: listed alike, or matched by (or naming) a template declared alike. */
function servesResource(state: RouteState, uri: string): boolean {
  if (state.canaryResources?.has(uri)) return true;
  return (state.canaryTemplates ?? []).some((template) => {
    if (template === uri) return true;
    try {
      return new UriTemplate(template).match(uri) !== null;
    } catch {
      return false;
    }
  });
}

/** True when the canary serves this target exactly as the active slot declares it. */
export function canaryServes(state: RouteState, target: SlotTarget): boolean {
  if (target.kind === 'tool') return state.canaryTools.has(target.name);
  if (target.kind === 'prompt') return state.canaryPrompts?.has(target.name) === true;
  return servesResource(state, target.uri);
}

/** True when this request goes to the canary slot: the session's bucket is in the step's share and the canary serves the target unchanged. */
export function routesTargetToCanary(state: RouteState, sessionKey: string, target: SlotTarget): boolean {
  if (state.canaryPercent <= 0 || !canaryServes(state, target)) return false;
  if (state.canaryPercent >= 100) return true;
  return bucketOf(state.pluginId, sessionKey) < state.canaryPercent;
}

/** True when this tool call goes to the canary slot. */
export function routesToCanary(state: RouteState, sessionKey: string, toolName: string): boolean {
  return routesTargetToCanary(state, sessionKey, { kind: 'tool', name: toolName });
}
