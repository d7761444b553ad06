/**
 * @module selection/engine/event-log
 * Selection events (seed 001 §7.5). An event id returned to a caller is durable (issue #23): an
 * outcome for it is accepted after the process is killed. How depends on the store:
 * - `journal` (embedded database in a folder): appended to a journal file before the id is
 *   returned (microseconds), written to the database in batches in the quiet period between
 *   selections (the embedded database's writes hold the event loop, issue #18), and what a
 *   killed run left unwritten is written when the next one starts;
 * - `write-through` (PostgreSQL): a row before the id is returned, grouped with the other
 *   events of the moment into one INSERT (an awaited round trip, not event-loop work); on many
 *   replicas this is the only kind that another replica can see at once;
 * - `batched` (in-memory database): written in batches only; nothing outlives the process anyway.
 * A batch failure is logged, never thrown into a request; a queued or journaled event is known,
 * so an outcome for it can wait for its row.
 */
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import type { AppendJournal, JournalTicket } from '../../store/append-journal.ts';
import { WRITE_CHUNK_ROWS, createBatchWriter, isRowError } from '../../store/batch-writer.ts';
import { createGroupCommit } from '../../store/group-commit.ts';
import { insertSelectionEvents, type SelectionEventWrite } from '../../store/repositories/selection-events.ts';
import { openEventJournal, recoverJournaledEvents } from './event-journal.ts';

/** How acknowledged events are kept (see the module comment). */
export type EventDurability = { kind: 'batched' } | { kind: 'write-through' } | { kind: 'journal'; directory: string };

/** The event log. */
export interface EventLog {
  /** Logs one event; resolves once it is durable as its kind promises. Rejects when it cannot be logged. */
  record(event: SelectionEventWrite): Promise<void>;
  /** Whether this event is queued and not yet written. */
  isPending(eventId: string): boolean;
  /** Resolves once a previous run's journaled events are written (or could not be). */
  ready(): Promise<void>;
  /** Writes the queued events now (after any recovery of a previous run's journal). */
  flush(): Promise<void>;
  /** Flushes and closes the journal. */
  close(): Promise<void>;
}

/** Batch settings shared by the event and outcome queues. */
export interface BatchSettings {
  flushMs: number;
  /** Writes wait for a pause in selections up to this long (batch-writer `maxWaitMs`). */
  maxWaitMs?: number | undefined;
  batchSize: number;
  maxQueue: number;
}

/** Creates the event log. */
export function createEventLog(options: { db: Database; logger: Logger; durability?: EventDurability | undefined } & BatchSettings): EventLog {
  const { db, logger, flushMs, maxWaitMs, batchSize, maxQueue } = options;
  const durability = options.durability ?? { kind: 'batched' };
  if (durability.kind === 'write-through') {
    const writer = createGroupCommit<SelectionEventWrite>({ write: (batch) => insertSelectionEvents(db, batch), maxBatch: batchSize });
    return {
      record: (event) => writer.submit(event),
      isPending: () => false,
      ready: () => Promise.resolve(),
      flush: () => writer.idle(),
      close: () => writer.idle(),
    };
  }

  const journal: AppendJournal<SelectionEventWrite> | undefined = durability.kind === 'journal' ? openEventJournal(durability.directory) : undefined;
  const tickets = new Map<string, JournalTicket>();
  // Events that failed for a reason not their own: their journal lines are kept for the next start.
  const failed = new Set<string>();
  const pendingIds = new Set<string>();
  const events = createBatchWriter<SelectionEventWrite>({
    write: (batch) => insertSelectionEvents(db, batch),
    flushMs,
    ...(maxWaitMs !== undefined ? { maxWaitMs } : {}),
    batchSize,
    // Short statements with the event loop running between them (issue #28: no flush stalls a search).
    chunkSize: WRITE_CHUNK_ROWS,
    maxQueue,
    onDrop: (dropped) => {
      pendingIds.delete(dropped.id);
      const ticket = tickets.get(dropped.id);
      tickets.delete(dropped.id);
      if (ticket) journal?.retain(ticket);
      logger.warn({ eventId: dropped.id, journaled: ticket !== undefined }, 'selection: event queue full; oldest event dropped');
    },
    // Best effort: report, never throw into a request.
    onError: (error, batch) => {
      if (journal && !isRowError(error)) for (const event of batch) failed.add(event.id);
      logger.error({ err: error, events: batch.length, journaled: journal !== undefined && !isRowError(error) }, 'selection: could not write selection events');
    },
    onSettled: (batch) => {
      for (const event of batch) {
        pendingIds.delete(event.id);
        const ticket = tickets.get(event.id);
        if (ticket === undefined) continue;
        tickets.delete(event.id);
        if (failed.delete(event.id)) journal!.retain(ticket);
        else journal!.settle(ticket);
      }
    },
  });

  // A previous run's unwritten events go in before anything reads or completes one.
  const recovery: Promise<void> =
    journal === undefined || journal.recovered.length === 0
      ? Promise.resolve()
      : recoverJournaledEvents(db, journal, logger).then(
          (result) => logger.info(result, 'selection: wrote the events a previous run had journaled'),
          (error: unknown) => logger.error({ err: error }, 'selection: could not write journaled events; kept for the next start'),
        );

  const flush = async (): Promise<void> => {
    await recovery;
    await events.flush();
  };

  return {
    async record(event) {
      // Journaled first: if the append throws (disk full), the caller gets no id for it.
      if (journal) tickets.set(event.id, journal.append(event));
      pendingIds.add(event.id);
      events.push(event);
    },
    isPending: (eventId) => pendingIds.has(eventId),
    ready: () => recovery,
    flush,
    async close() {
      await flush();
      journal?.close();
    },
  };
}
