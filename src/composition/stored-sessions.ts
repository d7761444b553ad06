/**
 * @module composition/stored-sessions
 * Wires MCP sessions in the database into `quiver serve` (issue #16): the session store with the
 * configured limits, and the periodic `sessions.collect` job (one replica at a time) that
 * deletes expired sessions and reports the selection outcomes they or their stale searches left
 * open. Also `diagnostics.probe`, a job that sleeps and says which replica ran it: how an
 * operator (or the replica test) sees that every replica takes work and a dead one's is re-run.
 */
import { hostname } from 'node:os';
import type { App } from './app-type.ts';
import type { Gateway } from '../gateway/gateway.ts';
import { createSessionStore, type SessionStore } from '../sessions/index.ts';

/** The kind of the periodic session collection. */
export const COLLECT_SESSIONS_JOB = 'sessions.collect';
/** The kind of the diagnostic probe job. */
export const PROBE_JOB = 'diagnostics.probe';

/** The store of `/mcp` sessions with the configured limits. */
export function createAppSessionStore(app: App): SessionStore {
  const { mcp } = app.config;
  return createSessionStore({
    db: app.db,
    limits: { maxSessions: mcp.maxSessions, maxSessionsPerKey: mcp.maxSessionsPerKey, maxSessionsPerOrg: mcp.maxSessionsPerOrg, idleTtlMs: mcp.sessionIdleTtlMs },
    logger: app.logger,
  });
}

/** How often expired sessions are collected: a quarter of the idle TTL, between 1 s and 60 s. */
export function collectIntervalMs(idleTtlMs: number): number {
  return Math.min(60_000, Math.max(1_000, Math.floor(idleTtlMs / 4)));
}

/**
 * One collection: expired sessions deleted (their SSE events with them), their open outcomes and
 * stale ones reported, SSE events past their age limit deleted.
 */
export async function collectSessions(store: SessionStore, gateway: Gateway, now = Date.now()): Promise<{ expired: number; staleOutcomes: number; oldEvents: number }> {
  const expired = await store.collectExpired();
  for (const row of expired) gateway.reportStoredOutcome(row.state);
  const stale = await store.takeStaleOpenEvents(now - gateway.outcomeWindowMs);
  for (const { openEvent } of stale) gateway.reportStoredOutcome({ openEvent });
  const oldEvents = await store.events.collect();
  return { expired: expired.length, staleOutcomes: stale.length, oldEvents };
}

/** Registers the session collection and the probe on the app's job worker (before `jobs.start()`). */
export function registerSessionJobs(app: App, store: SessionStore, gateway: Gateway): void {
  const registered = (error: unknown) => error instanceof Error && /already registered/.test(error.message);
  try {
    app.jobs.every(COLLECT_SESSIONS_JOB, collectIntervalMs(app.config.mcp.sessionIdleTtlMs), () => collectSessions(store, gateway));
  } catch (error) {
    // A second server in one process (tests): the first one's registration stands.
    if (!registered(error)) throw error;
  }
  try {
    app.jobs.register(PROBE_JOB, async ({ job, signal }) => {
      const startedAt = new Date().toISOString();
      const sleepMs = Math.min(60_000, Math.max(0, Number(job.payload.sleepMs ?? 0) || 0));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, sleepMs);
        signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
      });
      return { host: hostname(), pid: process.pid, startedAt, attempt: job.attempts };
    });
  } catch (error) {
    if (!registered(error)) throw error;
  }
}
