/**
 * @module selection/learning/transition-scopes
 * "Called after" transitions (called-after.ts) per organisation scope: recorded from the tools a
 * capture let a session learn (so every guard of learned examples holds here too), held in
 * memory per scope as an overlay, and re-read from the database, which counts each pair's
 * distinct contributors. The session's previous calls live in memory only.
 */
import type { Database } from '../../store/database.ts';
import { loadScopeTransitions, recordTransitions } from '../../store/repositories/learned-transitions.ts';
import { buildCalledAfter, createSessionTrail, transitionsOf, type CalledAfterOverlay } from './called-after.ts';

export interface TransitionScopes {
  /** A scope's overlay as held now, and whether it is missing or older than `maxAgeMs`. */
  current(orgScope: string, maxAgeMs: number): { overlay: CalledAfterOverlay | undefined; stale: boolean };
  /** Whether a scope is held in memory (so a change must re-read it). */
  holds(orgScope: string): boolean;
  /** Every scope held. */
  held(): string[];
  /** Re-reads a scope's transitions from the database. */
  reload(orgScope: string): Promise<void>;
  /** Records the transitions from the session's previous calls to `called`; returns how many pairs. */
  learn(orgScope: string, sessionKey: string, contributor: string, called: readonly string[]): Promise<number>;
}

export function createTransitionScopes(input: { db: Database; now: () => number; perToolCap: number }): TransitionScopes {
  const trail = createSessionTrail({ ttlMs: 30 * 60_000, maxSessions: 10_000, toolsPerSession: 4 });
  const scopes = new Map<string, { overlay: CalledAfterOverlay; at: number }>();

  async function reload(orgScope: string): Promise<void> {
    // One row per pair (grouped in SQL), with its count of distinct contributors.
    scopes.set(orgScope, { overlay: buildCalledAfter(await loadScopeTransitions(input.db, orgScope)), at: input.now() });
  }

  return {
    current(orgScope, maxAgeMs) {
      const entry = scopes.get(orgScope);
      return { overlay: entry?.overlay, stale: !entry || input.now() - entry.at > maxAgeMs };
    },
    holds: (orgScope) => scopes.has(orgScope),
    held: () => [...scopes.keys()],
    reload,
    async learn(orgScope, sessionKey, contributor, called) {
      const now = input.now();
      const key = `${orgScope}\u0000${sessionKey}`;
      const pairs = transitionsOf(trail.previous(key, now), called);
      trail.remember(key, [...trail.previous(key, now), ...called], now);
      if (pairs.length === 0) return 0;
      const at = new Date(now);
      await recordTransitions(input.db, pairs.map(([fromTool, toTool]) => ({ orgScope, fromTool, toTool, contributor, at })), { perTool: input.perToolCap });
      // A scope held in memory is re-read (counts are per distinct contributor, which the database knows).
      if (scopes.has(orgScope)) await reload(orgScope);
      return pairs.length;
    },
  };
}
