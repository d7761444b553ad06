/**
 * @module selection/learning/capture
 * Turns a committed outcome into learned examples (DESIGN §3.10, issue #13). Only a successful
 * outcome teaches, and only its called tools that the loop guard did not flag, that are not
 * quarantined and whose learning an admin has not switched off. The request is redacted
 * before anything is written; the caps are applied in the same transaction.
 */
import type { Database } from '../../store/database.ts';
import { findEventRequest, isLearningBlocked, upsertLearnedExample, type LearnedExampleRow } from '../../store/repositories/learned-examples.ts';
import type { OutcomeObservation } from '../engine/types.ts';
import { redact, textKey } from './redact.ts';
import { orgScopeOf, perContributorCap, type LearningSettings } from './settings.ts';

/** Why an observation taught nothing (counted in `Learning.stats`). */
export type SkipReason = 'disabled' | 'failed' | 'no_call' | 'flagged' | 'quarantined' | 'blocked' | 'no_request' | 'too_short';

/** What one observation did. */
export interface CaptureResult {
  orgScope?: string;
  learned: string[];
  skipped: SkipReason[];
  /** Rows written and ids trimmed, for the scope's in-memory overlay. */
  written: LearnedExampleRow[];
  removed: string[];
  /** Who taught, and the session the calls belong to (its user's when it has none), for "called after". */
  contributor?: string;
  sessionKey?: string;
}

/** The tool quarantine check (issue #10); a tool it names teaches nothing. */
export type QuarantineCheck = (toolId: string) => boolean | Promise<boolean>;

/**
 * Who taught an example: the user when known, else the session; a request with neither counts
 * as one shared anonymous contributor, so unattributed traffic can never multiply its share.
 */
export function contributorOf(request: { userId: string | null; sessionId: string | null }): string {
  if (request.userId) return `user:${request.userId}`;
  if (request.sessionId) return `session:${request.sessionId}`;
  return 'anonymous';
}

/** Fail closed: a tool whose quarantine cannot be checked teaches nothing. */
async function quarantined(check: QuarantineCheck | undefined, toolId: string): Promise<boolean> {
  if (!check) return false;
  try {
    return await check(toolId);
  } catch {
    return true;
  }
}

const nothing = (reason: SkipReason): CaptureResult => ({ learned: [], skipped: [reason], written: [], removed: [] });

/** Learns from one observation; returns the tools that learned and why the others did not. */
export async function captureObservation(
  deps: { db: Database; settings: LearningSettings; clock: () => Date; isQuarantined?: QuarantineCheck | undefined },
  observation: OutcomeObservation,
): Promise<CaptureResult> {
  const { db, settings } = deps;
  if (!settings.enabled) return nothing('disabled');
  if (!observation.success) return nothing('failed');
  if (observation.calledToolIds.length === 0) return nothing('no_call');
  const request = observation.request ?? (await findEventRequest(db, observation.eventId));
  if (!request) return nothing('no_request');
  const text = redact(request.query.trim()).text.slice(0, 1000);
  const key = textKey(text);
  if (key.replace(/<[a-z]+>/g, '').trim().length < 3) return nothing('too_short');
  const orgScope = orgScopeOf(request.orgId);
  const flagged = new Set(observation.flaggedToolIds);
  const contributor = contributorOf(request);
  const sessionKey = request.sessionId ? `session:${request.sessionId}` : contributor;
  const result: CaptureResult = { orgScope, learned: [], skipped: [], written: [], removed: [], contributor, sessionKey };
  for (const toolId of new Set(observation.calledToolIds)) {
    if (flagged.has(toolId)) result.skipped.push('flagged');
    else if (await quarantined(deps.isQuarantined, toolId)) result.skipped.push('quarantined');
    else if (await isLearningBlocked(db, orgScope, toolId)) result.skipped.push('blocked');
    else {
      const write = { orgScope, toolId, text, textKey: key, contributor, source: observation.source, at: deps.clock() };
      const { written, removed } = await db.transaction((tx) => upsertLearnedExample(tx, write, { perTool: settings.perToolCap, perContributor: perContributorCap(settings) }));
      result.learned.push(toolId);
      result.written.push(written);
      result.removed.push(...removed);
    }
  }
  return result;
}
