/**
 * @module selection/learning/called-after
 * "Called after" (issue #25, plan steps learned from use): in an organisation, tool B was called
 * after tool A in one successful session, or with it in one successful outcome. When A ranks at
 * the top of a later request, B is pulled in just below it: the writer after the reader, the
 * second tool a request of that kind keeps needing.
 *
 * Guards, as for learned examples: only the tools capture let learn (successful outcome, not
 * loop-flagged, not quarantined, learning not switched off) take part; per organisation scope;
 * a transition weighs by its distinct contributors (user, else session), each worth
 * `contributorShare`, so one user's repeats count once and reach at most a third of the pull;
 * at most `perToolCap` successors per tool (recency); the same retention. Nothing is stored but
 * tool ids and the contributor key (no request text).
 */
import type { TransitionCount } from '../../store/repositories/learned-transitions.ts';

/** Tuning of the pull (set by judgement; docs/retrieval.md, "Called after"). */
export interface CalledAfterSettings {
  /** How many of the best tools may pull successors. */
  consumers: number;
  /** A consumer scores at least this share of the best score. */
  consumerShare: number;
  /** A fully supported successor's score: this share of its consumer's. */
  pullFactor: number;
  /** At most this many successors pulled per request. */
  maxPulled: number;
  /** Weight of one contributor (full support at 1 / share contributors). */
  contributorShare: number;
}

export const defaultCalledAfterSettings: CalledAfterSettings = { consumers: 2, consumerShare: 0.75, pullFactor: 0.8, maxPulled: 2, contributorShare: 0.34 };

/** A scope's transitions as ranking reads them. */
export interface CalledAfterOverlay {
  /** Number of transitions. */
  readonly size: number;
  /** Successors of a tool with their distinct contributor counts. */
  successors(fromTool: string): ReadonlyMap<string, number> | undefined;
}

/** Builds an overlay from a scope's aggregated transitions. */
export function buildCalledAfter(counts: readonly TransitionCount[]): CalledAfterOverlay {
  const from = new Map<string, Map<string, number>>();
  for (const { fromTool, toTool, contributors } of counts) {
    if (fromTool === toTool || contributors <= 0) continue;
    const successors = from.get(fromTool) ?? from.set(fromTool, new Map()).get(fromTool)!;
    successors.set(toTool, contributors);
  }
  return { size: counts.length, successors: (fromTool) => from.get(fromTool) };
}

/**
 * The transitions one guarded successful outcome teaches: each tool called earlier in the
 * session → each tool called now, and between tools called together both ways (one request
 * asked for both, in whichever order the model happened to call them).
 */
export function transitionsOf(previous: readonly string[], called: readonly string[]): [string, string][] {
  const pairs = new Map<string, [string, string]>();
  const add = (a: string, b: string) => {
    if (a !== b) pairs.set(`${a}\u0000${b}`, [a, b]);
  };
  for (const a of previous) for (const b of called) add(a, b);
  for (const a of called) for (const b of called) add(a, b);
  return [...pairs.values()];
}

/** The last guarded successful calls of each session, in memory (bounded, expiring). */
export interface SessionTrail {
  previous(key: string, now: number): readonly string[];
  remember(key: string, tools: readonly string[], now: number): void;
}

/** A trail that forgets a session after `ttlMs` and holds at most `maxSessions` (oldest out). */
export function createSessionTrail(options: { ttlMs: number; maxSessions: number; toolsPerSession: number }): SessionTrail {
  const trail = new Map<string, { tools: string[]; at: number }>();
  return {
    previous(key, now) {
      const entry = trail.get(key);
      if (!entry || now - entry.at > options.ttlMs) return [];
      return entry.tools;
    },
    remember(key, tools, now) {
      if (tools.length === 0) return;
      trail.delete(key);
      trail.set(key, { tools: [...new Set(tools)].slice(-options.toolsPerSession), at: now });
      while (trail.size > options.maxSessions) trail.delete(trail.keys().next().value!);
    },
  };
}

/**
 * Pulls the learned successors of the best tools into a ranking (best first; returns a new
 * ranking of at most `k`). A successor is added only when `candidateIds` says the caller may see
 * it; without a candidate set only tools already ranked are raised.
 */
export function pullSuccessors(
  ranked: readonly { id: string; score: number }[],
  overlay: CalledAfterOverlay,
  options: { k: number; candidateIds?: ReadonlySet<string> | undefined },
  settings: CalledAfterSettings = defaultCalledAfterSettings,
): { id: string; score: number }[] {
  const best = ranked[0]?.score ?? 0;
  if (overlay.size === 0 || !(best > 0)) return ranked.slice(0, options.k);
  const scores = new Map(ranked.map((hit) => [hit.id, hit.score]));
  let pulled = 0;
  for (const consumer of ranked.slice(0, settings.consumers)) {
    if (consumer.score < settings.consumerShare * best) break;
    const successors = overlay.successors(consumer.id);
    if (!successors) continue;
    // Strongest support first; ties by id, so the same state ranks the same way.
    const ordered = [...successors].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    for (const [successor, contributors] of ordered) {
      if (pulled >= settings.maxPulled) break;
      const known = scores.get(successor);
      if (known === undefined && !options.candidateIds?.has(successor)) continue;
      const target = consumer.score * settings.pullFactor * Math.min(1, contributors * settings.contributorShare);
      if ((known ?? 0) >= target) continue;
      scores.set(successor, target);
      pulled++;
    }
  }
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, options.k);
}
