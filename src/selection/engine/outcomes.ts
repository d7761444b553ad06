/**
 * @module selection/engine/outcomes
 * Outcomes: what the LLM called from a selection, stored on its event, and the bandit updates
 * that follow (seed 001 §5.5). `record` is transactional and answers (404 for a missing or
 * foreign event, 409 for a second report); `queue` is the gateway's path off the hot path:
 * resolved in memory from what the selection offered and written in batches.
 */
import { z } from 'zod';
import { QuiverError, ErrorCodes, notFound } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { Database } from '../../store/database.ts';
import { WRITE_CHUNK_ROWS, createBatchWriter } from '../../store/batch-writer.ts';
import { findCandidatesByIds } from '../../store/repositories/candidates.ts';
import { incrementArms, type BanditIncrement } from '../../store/repositories/bandit-stats.ts';
import { findSelectionEvent, writeEventOutcome } from '../../store/repositories/selection-events.ts';
import { writeEventOutcomesWithArms } from '../../store/repositories/selection-outcomes.ts';
import { LruTtlCache } from '../lru-cache.ts';
import { PROVIDERS, providerToolName } from '../provider-formats.ts';
import type { BanditArms } from './bandit-arms.ts';
import type { BatchSettings, EventLog } from './event-log.ts';
import {
  outcomeInputSchema,
  type OfferedEvent,
  type OfferedTool,
  type OutcomeInput,
  type OutcomeObservation,
  type OutcomeObserver,
  type OutcomeOptions,
  type OutcomeResult,
  type QueuedOutcome,
} from './types.ts';

/** Sums increments per tool (one arm row is written once per statement). */
export function mergeIncrements(increments: readonly BanditIncrement[]): BanditIncrement[] {
  const byTool = new Map<string, BanditIncrement>();
  for (const increment of increments) {
    const sum = byTool.get(increment.toolId);
    if (!sum) byTool.set(increment.toolId, { ...increment });
    else {
      sum.alpha += increment.alpha;
      sum.beta += increment.beta;
      sum.selections += increment.selections;
      sum.successes += increment.successes;
    }
  }
  return [...byTool.values()];
}

/** Resolves reported names (ids, qualified or provider names) against the offered tools; the rest are unresolved. */
export function resolveCalled(tools: readonly OfferedTool[], toolsCalled: readonly string[]) {
  const lookup = new Map<string, OfferedTool>();
  for (const tool of tools) {
    lookup.set(tool.id, tool);
    lookup.set(tool.qualifiedName, tool);
    for (const provider of PROVIDERS) lookup.set(providerToolName(tool.qualifiedName, provider), tool);
  }
  const calledIds = new Set<string>();
  const stored: string[] = [];
  const unresolved: string[] = [];
  for (const name of toolsCalled) {
    const tool = lookup.get(name);
    if (tool) {
      calledIds.add(tool.id);
      stored.push(tool.qualifiedName);
    } else {
      unresolved.push(name);
      stored.push(name);
    }
  }
  return { calledIds, stored, unresolved };
}

/** Seed 001 §5.5: a called tool moves by the call's success; an offered, uncalled one only counts as selected. */
export function incrementsOf(offeredIds: readonly string[], calledIds: ReadonlySet<string>, success: boolean): BanditIncrement[] {
  return offeredIds.map((toolId) => {
    const called = calledIds.has(toolId);
    return { toolId, alpha: called && success ? 1 : 0, beta: called && !success ? 1 : 0, selections: 1, successes: called && success ? 1 : 0 };
  });
}

function outcomeKind(toolsCalled: readonly string[], success: boolean): OutcomeResult['outcome'] {
  return toolsCalled.length === 0 ? 'no_call' : success ? 'success' : 'failure';
}

/** The outcome paths. */
export interface Outcomes {
  /** Remembers what a logged selection offered, so its queued outcome resolves in memory. */
  remember(eventId: string, offered: OfferedEvent): void;
  /** The transactional report (see `SelectionEngine.recordOutcome`). */
  record(eventId: string, outcome: OutcomeInput, options?: OutcomeOptions): Promise<OutcomeResult>;
  /** The queued report (see `SelectionEngine.queueOutcome`). */
  queue(eventId: string, outcome: OutcomeInput): void;
  /** Writes queued events, then queued outcomes. */
  flush(): Promise<void>;
}

/** Creates the outcome paths over the event log and the arms cache. */
export function createOutcomes(
  options: { db: Database; logger: Logger; clock: () => Date; now: () => number; events: EventLog; arms: BanditArms; observer?: OutcomeObserver | undefined } & BatchSettings,
): Outcomes {
  const { db, logger, clock, now, events, arms, flushMs, maxWaitMs, batchSize, maxQueue } = options;
  // The observer (learned examples, issue #13) hears only committed outcomes, and never throws into this path.
  const observe = (observation: OutcomeObservation): void => {
    try {
      options.observer?.observe(observation);
    } catch (error) {
      logger.warn({ err: error, eventId: observation.eventId }, 'selection: outcome observer failed');
    }
  };
  // What each logged selection offered, so a queued outcome resolves without reading the event
  // back (issue #18 finding 9: no database round trip per search). Bounded; a report for an
  // event no longer here takes the transactional path of record.
  const offeredByEvent = new LruTtlCache<OfferedEvent>({ maxEntries: maxQueue, ttlMs: 3_600_000, now });
  const pendingOutcomeIds = new Set<string>();
  const outcomes = createBatchWriter<QueuedOutcome>({
    write: writeQueuedOutcomes,
    flushMs,
    ...(maxWaitMs !== undefined ? { maxWaitMs } : {}),
    batchSize,
    // One short transaction per chunk, the event loop running between them (issue #28).
    chunkSize: WRITE_CHUNK_ROWS,
    maxQueue,
    onDrop: (dropped) => {
      pendingOutcomeIds.delete(dropped.write.id);
      logger.warn({ eventId: dropped.write.id }, 'selection: outcome queue full; oldest outcome dropped');
    },
    onError: (error, batch) => logger.error({ err: error, outcomes: batch.length }, 'selection: could not write selection outcomes'),
    onSettled: (batch) => {
      for (const item of batch) pendingOutcomeIds.delete(item.write.id);
    },
  });

  async function writeQueuedOutcomes(batch: QueuedOutcome[]): Promise<void> {
    // The events must be rows before their outcomes can land on them.
    await events.flush();
    // The outcomes and their arms' increments in one statement (issue #28: it was a transaction
    // of the outcome UPDATE and one arm upsert per context key); only written outcomes move arms.
    const increments = batch.flatMap((item) => item.increments.map((increment) => ({ ...increment, eventId: item.write.id, contextKey: item.contextKey })));
    const written = await writeEventOutcomesWithArms(
      db,
      batch.map((item) => item.write),
      increments,
    );
    const byContext = new Map<string, BanditIncrement[]>();
    for (const item of batch) {
      if (!written.has(item.write.id)) continue;
      const list = byContext.get(item.contextKey) ?? [];
      list.push(...item.increments);
      byContext.set(item.contextKey, list);
    }
    for (const [contextKey, committed] of byContext) arms.apply(contextKey, mergeIncrements(committed));
    for (const item of batch) if (item.observation && written.has(item.write.id)) observe(item.observation);
  }

  const flush = async (): Promise<void> => {
    await events.flush();
    await outcomes.flush();
  };

  async function record(eventId: string, outcome: OutcomeInput, outcomeOptions: OutcomeOptions = {}): Promise<OutcomeResult> {
    if (!z.string().uuid().safeParse(eventId).success) throw notFound('selection event', eventId);
    const report = parseOrThrow(outcomeInputSchema, outcome, 'outcome');
    // Reported here: a later queued report for the same event must take this path too (and conflict).
    offeredByEvent.delete(eventId);
    // An event a killed run journaled is a row once the recovery at start is done (issue #23).
    await events.ready();
    if (pendingOutcomeIds.has(eventId)) await flush();
    else if (events.isPending(eventId)) await events.flush();
    const result = await db.transaction(async (tx) => {
      const event = await findSelectionEvent(tx, eventId, { lock: true });
      // Someone else's event reads as missing, so its existence does not leak across tenants.
      const foreign =
        event !== undefined &&
        ((outcomeOptions.orgId !== undefined && event.orgId !== outcomeOptions.orgId) ||
          (outcomeOptions.workspaceId !== undefined && event.workspaceId !== outcomeOptions.workspaceId));
      if (event === undefined || foreign) throw notFound('selection event', eventId);
      if (event.outcomeAt !== null) throw new QuiverError(ErrorCodes.conflict, `the outcome of selection event '${eventId}' was already recorded`);
      const offered = await findCandidatesByIds(tx, event.selectedToolIds);
      const { calledIds, stored, unresolved } = resolveCalled(offered, report.toolsCalled);
      const kind = outcomeKind(report.toolsCalled, report.success);
      const written = await writeEventOutcome(tx, { id: eventId, toolsCalled: stored, calledToolIds: [...calledIds], success: report.success, outcome: kind, at: clock() });
      if (!written) throw new QuiverError(ErrorCodes.conflict, `the outcome of selection event '${eventId}' was already recorded`);
      const increments = incrementsOf(offered.map((tool) => tool.id), calledIds, report.success);
      await incrementArms(tx, event.contextKey, increments);
      const flaggedToolIds = [...resolveCalled(offered, report.flaggedTools ?? []).calledIds];
      return { contextKey: event.contextKey, increments, flaggedToolIds, value: { eventId, outcome: kind, toolsCalled: stored, calledToolIds: [...calledIds], unresolved } };
    });
    arms.apply(result.contextKey, result.increments);
    observe({ eventId, source: 'api', calledToolIds: result.value.calledToolIds, success: report.success, flaggedToolIds: result.flaggedToolIds });
    return result.value;
  }

  function queue(eventId: string, outcome: OutcomeInput): void {
    const parsed = outcomeInputSchema.safeParse(outcome);
    const offered = offeredByEvent.get(eventId);
    if (!parsed.success || offered === undefined || pendingOutcomeIds.has(eventId)) {
      // Unknown here (another process's event, or long ago): the transactional path decides.
      record(eventId, outcome).catch((error: unknown) => logger.warn({ err: error, eventId }, 'selection: outcome not recorded'));
      return;
    }
    offeredByEvent.delete(eventId);
    const report = parsed.data;
    const { calledIds, stored } = resolveCalled(offered.tools, report.toolsCalled);
    const flaggedToolIds = [...resolveCalled(offered.tools, report.flaggedTools ?? []).calledIds];
    pendingOutcomeIds.add(eventId);
    outcomes.push({
      write: { id: eventId, toolsCalled: stored, calledToolIds: [...calledIds], success: report.success, outcome: outcomeKind(report.toolsCalled, report.success), at: clock() },
      contextKey: offered.contextKey,
      increments: incrementsOf(offered.tools.map((tool) => tool.id), calledIds, report.success),
      observation: {
        eventId,
        source: 'gateway',
        ...(offered.request ? { request: offered.request } : {}),
        calledToolIds: [...calledIds],
        success: report.success,
        flaggedToolIds,
      },
    });
  }

  return {
    remember: (eventId, offered) => offeredByEvent.set(eventId, offered),
    record,
    queue,
    flush,
  };
}
