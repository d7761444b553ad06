/**
 * @module selection/engine/event-log
 * Selection events off the hot path (seed 001 §7.5): queued and written in batches; a full
 * queue drops its oldest event with a warning, a failed batch is logged, never thrown into a
 * request. Knows which events are still queued, so an outcome for one can wait for its row.
 */
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import { createBatchWriter } from '../../store/batch-writer.ts';
import { insertSelectionEvents, type SelectionEventWrite } from '../../store/repositories/selection-events.ts';

/** The event queue. */
export interface EventLog {
  /** Queues one event. */
  enqueue(event: SelectionEventWrite): void;
  /** Whether this event is queued and not yet written. */
  isPending(eventId: string): boolean;
  /** Writes the queued events now. */
  flush(): Promise<void>;
}

/** Batch settings shared by the event and outcome queues. */
export interface BatchSettings {
  flushMs: number;
  /** Writes wait for a pause in selections up to this long (batch-writer `maxWaitMs`). */
  maxWaitMs?: number | undefined;
  batchSize: number;
  maxQueue: number;
}

/** Creates the event queue. */
export function createEventLog(options: { db: Database; logger: Logger } & BatchSettings): EventLog {
  const { db, logger, flushMs, maxWaitMs, batchSize, maxQueue } = options;
  const pendingIds = new Set<string>();
  const events = createBatchWriter<SelectionEventWrite>({
    write: (batch) => insertSelectionEvents(db, batch),
    flushMs,
    ...(maxWaitMs !== undefined ? { maxWaitMs } : {}),
    batchSize,
    maxQueue,
    onDrop: (dropped) => {
      pendingIds.delete(dropped.id);
      logger.warn({ eventId: dropped.id }, 'selection: event queue full; oldest event dropped');
    },
    // Best effort: report, never throw into a request.
    onError: (error, batch) => logger.error({ err: error, events: batch.length }, 'selection: could not write selection events'),
    onSettled: (batch) => {
      for (const event of batch) pendingIds.delete(event.id);
    },
  });
  return {
    enqueue(event) {
      pendingIds.add(event.id);
      events.push(event);
    },
    isPending: (eventId) => pendingIds.has(eventId),
    flush: () => events.flush(),
  };
}
