/**
 * @module selection/learning/capture
 * Turns a committed outcome into learned examples (DESIGN §3.10, issue #13). Only a successful
 * outcome teaches, and only its called tools that the loop guard did not flag, that are not
 * quarantined and whose learning an admin has not switched off. The request is redacted
 * before anything is written; the block check, the write and the caps are one transaction (one
 * `Database.batch`: with the quarantine check, two round trips per learned tool, issue #28).
 */
import type { Database } from '../../store/database.ts';
import { findEventRequest, writeLearnedExample, type LearnedExampleRow, type LearnedExampleWrite } from '../../store/repositories/learned-examples.ts';
import type { OutcomeObservation } from '../engine/types.ts';
import { redact, textKey } from './redact.ts';
import type { MissedRequest } from './missed-requests.ts';
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
  /** The request's text as stored (redacted), when it taught. */
  text?: string;
  /** A request that called nothing, for a later request of its session to teach (missed-requests.ts). */
  missed?: MissedRequest;
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

type CaptureDeps = { db: Database; settings: LearningSettings; clock: () => Date; isQuarantined?: QuarantineCheck | undefined };

/** The request's text as an example stores it (redacted, bounded) and its key; undefined when too short to teach. */
function exampleText(query: string): { text: string; key: string } | undefined {
  const text = redact(query.trim()).text.slice(0, 1000);
  const key = textKey(text);
  return key.replace(/<[a-z]+>/g, '').trim().length < 3 ? undefined : { text, key };
}

/** Learns from one observation; returns the tools that learned and why the others did not. */
export async function captureObservation(deps: CaptureDeps, observation: OutcomeObservation): Promise<CaptureResult> {
  const { db, settings } = deps;
  if (!settings.enabled) return nothing('disabled');
  if (observation.calledToolIds.length === 0) return missedRequest(deps, observation);
  if (!observation.success) return nothing('failed');
  const request = observation.request ?? (await findEventRequest(db, observation.eventId));
  if (!request) return nothing('no_request');
  const example = exampleText(request.query);
  if (!example) return nothing('too_short');
  const orgScope = orgScopeOf(request.orgId);
  const flagged = new Set(observation.flaggedToolIds);
  const contributor = contributorOf(request);
  const sessionKey = request.sessionId ? `session:${request.sessionId}` : contributor;
  const result: CaptureResult = { orgScope, learned: [], skipped: [], written: [], removed: [], contributor, sessionKey, text: example.text };
  for (const toolId of new Set(observation.calledToolIds)) {
    if (flagged.has(toolId)) result.skipped.push('flagged');
    else if (await quarantined(deps.isQuarantined, toolId)) result.skipped.push('quarantined');
    // The block is checked by the write itself (issue #28: one message, not a read and then a transaction).
    else if (await writeExample(deps, result, { orgScope, toolId, text: example.text, textKey: example.key, contributor, source: observation.source, at: deps.clock() }, { unlessBlocked: true })) {
      result.learned.push(toolId);
    } else result.skipped.push('blocked');
  }
  return result;
}

/**
 * A selection that called nothing: remembered (missed-requests.ts) when its session or user is
 * known, so the request that later finds its tool can teach it this wording too.
 */
async function missedRequest(deps: CaptureDeps, observation: OutcomeObservation): Promise<CaptureResult> {
  const skipped = nothing('no_call');
  const request = observation.request ?? (await findEventRequest(deps.db, observation.eventId));
  if (!request) return skipped;
  const contributor = contributorOf(request);
  if (contributor === 'anonymous') return skipped; // no session to follow
  const example = exampleText(request.query);
  if (!example) return skipped;
  const sessionKey = request.sessionId ? `session:${request.sessionId}` : contributor;
  return { ...skipped, orgScope: orgScopeOf(request.orgId), contributor, sessionKey, missed: { text: example.text, textKey: example.key, at: deps.clock().getTime() } };
}

/**
 * Teaches the tools `found` learned (every guard already passed) the session's related earlier
 * misses: written as that outcome's contributor, under the same caps.
 */
export async function teachMissed(deps: CaptureDeps, found: CaptureResult, source: OutcomeObservation['source'], misses: readonly MissedRequest[]): Promise<CaptureResult> {
  const result: CaptureResult = { ...found, learned: [], skipped: [], written: [], removed: [] };
  const { orgScope, contributor } = found;
  if (orgScope === undefined || contributor === undefined) return result;
  for (const miss of misses) {
    for (const toolId of found.learned) {
      await writeExample(deps, result, { orgScope, toolId, text: miss.text, textKey: miss.textKey, contributor, source, at: deps.clock() });
      result.learned.push(toolId);
    }
  }
  return result;
}

/**
 * One example written with its caps applied, in one transaction (one batch); the rows recorded
 * on `result`. With `unlessBlocked`, false when the tool's learning is off (nothing written).
 */
async function writeExample(deps: CaptureDeps, result: CaptureResult, write: LearnedExampleWrite, options: { unlessBlocked?: boolean } = {}): Promise<boolean> {
  const outcome = await writeLearnedExample(deps.db, write, { perTool: deps.settings.perToolCap, perContributor: perContributorCap(deps.settings) }, options);
  if (outcome === undefined) return false;
  result.written.push(outcome.written);
  result.removed.push(...outcome.removed);
  return true;
}
