/**
 * @module selection/learning/missed-requests
 * Misses that teach (issue #25, "learning that transfers"): a request whose search offered
 * nothing the caller used teaches nothing by itself, but an agent that misses usually searches
 * again in other words and calls what the second search found. When a later request of the
 * same session (its user's, without one) teaches a tool, the session's recent misses that are
 * about the same thing teach it too: the wording that missed is exactly what the index lacked.
 *
 * Guards: a miss is remembered in memory only (redacted text, bounded, expiring), for at most
 * `perSession` misses of `maxSessions` sessions; it teaches only the tools the later outcome
 * was allowed to teach (successful, not loop-flagged, not quarantined, not blocked), only
 * within `windowMs`, only when related to the request that found the tool (a content word in
 * common, or a cosine over the embedder's calibrated floor: an agent that gave up on one need
 * and turned to another must not teach the second tool the first request), and each miss once.
 * Its examples count against the same per-tool and per-contributor caps as any other.
 */
import { dot } from '../../retrieval/embedders/embedder.ts';

/** A request of a session that called nothing it was offered. */
export interface MissedRequest {
  /** Redacted request text, as an example would store it, and its dedupe key. */
  text: string;
  textKey: string;
  at: number;
}

/** Bounds of the memory of misses. */
export interface MissedRequestOptions {
  windowMs: number;
  maxSessions: number;
  perSession: number;
}

/** Defaults: an agent's reformulation comes within minutes, after one or two tries. */
export const defaultMissedRequestOptions: MissedRequestOptions = { windowMs: 10 * 60_000, maxSessions: 10_000, perSession: 2 };

/** Each session's latest misses, in memory. */
export interface MissedRequests {
  remember(sessionKey: string, miss: MissedRequest): void;
  /** The session's misses still within the window, forgotten as they are taken. */
  take(sessionKey: string, now: number): MissedRequest[];
  /** Sessions held (for tests and stats). */
  readonly size: number;
}

/** A memory that keeps the newest `perSession` misses per session and the newest `maxSessions` sessions. */
export function createMissedRequests(options: MissedRequestOptions = defaultMissedRequestOptions): MissedRequests {
  const sessions = new Map<string, MissedRequest[]>();
  return {
    remember(sessionKey, miss) {
      const held = (sessions.get(sessionKey) ?? []).filter((earlier) => earlier.textKey !== miss.textKey);
      sessions.delete(sessionKey);
      sessions.set(sessionKey, [...held, miss].slice(-options.perSession));
      while (sessions.size > options.maxSessions) sessions.delete(sessions.keys().next().value!);
    },
    take(sessionKey, now) {
      const held = sessions.get(sessionKey);
      if (!held) return [];
      sessions.delete(sessionKey);
      return held.filter((miss) => now - miss.at <= options.windowMs);
    },
    get size() {
      return sessions.size;
    },
  };
}

/** A request as relatedness reads it. */
export interface AnalysedText {
  vector: Float32Array;
  terms: readonly string[];
}

/**
 * Whether a missed request and the request that found the tool are about the same thing: a
 * content word in common, or cosine similarity of their vectors at or above `floor` (the
 * embedder's calibrated floor, where same-tool requests start to outnumber different-tool ones).
 */
export function relatedRequests(missed: AnalysedText, found: AnalysedText, floor: number): boolean {
  const foundTerms = new Set(found.terms);
  if (missed.terms.some((term) => foundTerms.has(term))) return true;
  // The embedders' vectors are unit length, so their dot product is the cosine.
  return Number.isFinite(floor) && missed.vector.length === found.vector.length && dot(missed.vector, found.vector) >= floor;
}
