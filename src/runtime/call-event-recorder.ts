/**
 * @module runtime/call-event-recorder
 * Persists the supervisor's `CallEvent`s (one per upstream tool call, DESIGN §3.6; runtime
 * issue "Health") to `plugin_call_events`, off the hot path: `record()` only queues; the queue
 * is written in the first `flushMs` pause between calls, or `maxWaitMs` after its oldest event
 * during a burst (or at once when a batch fills), one multi-row insert per batch (the embedded
 * database runs in its own thread, so a batch no longer holds the event loop). A full queue drops its oldest
 * event and counts it; a failed insert is logged and counted, never thrown into a call. An
 * event the database refuses is dropped alone (the batch writer isolates it), with a warning.
 *
 * @example
 * const recorder = createCallEventRecorder({ db, logger });
 * const supervisor = createSupervisor({ onCall: (event) => recorder.record(event) });
 * // … on shutdown: supervisor first (its last events), then the recorder, then the database.
 * await supervisor.close(); await recorder.close(); await db.close();
 */
import { silentLogger, type Logger } from '../core/logger.ts';
import type { Queryable } from '../store/database.ts';
import { isUuid } from '../store/repositories/mapping.ts';
import { createBatchWriter, isRowError } from '../store/batch-writer.ts';
import { sqlStateOf } from '../store/database-errors.ts';
import { deletePluginCallEventsBefore, insertPluginCallEvents, type PluginCallEventWrite } from '../store/repositories/plugin-call-events.ts';
import type { CallEvent } from './types.ts';

/** The periodic job that runs `prune` on one replica at a time (registered by the app). */
export const PRUNE_CALL_EVENTS_JOB = 'call-events.prune';

/** Options of `createCallEventRecorder`. */
export interface CallEventRecorderOptions {
  db: Queryable;
  logger?: Logger;
  /** Quiet period: the queue is written this long after the last event (ms, default 50). */
  flushMs?: number;
  /** Longest an event waits during a burst of calls (ms, default 1 000). */
  maxWaitMs?: number;
  /** Events per insert; a queue this long is written at once (default 200). */
  batchSize?: number;
  /** Queue bound: beyond it the oldest event is dropped (default 10 000). */
  maxQueue?: number;
  /** Events older than this many days are deleted (default 30; 0 keeps everything). */
  retentionDays?: number;
  now?: () => Date;
}

/** A call event as the recorder takes it: the supervisor's, optionally with the MCP session. */
export type RecordableCallEvent = Pick<CallEvent, 'pluginId' | 'pluginName' | 'tool' | 'latencyMs' | 'outcome' | 'errorClass' | 'at'> & {
  sessionId?: string | undefined;
  /** The runtime version that served the call: a rollout judges each blue-green slot by it (issue #11). */
  version?: string | undefined;
};

/** Counters of a recorder (for tests, logs and metrics). */
export interface CallEventRecorderStats {
  /** Waiting to be written. */
  queued: number;
  /** Stored in the database. */
  written: number;
  /** Dropped because the queue was full. */
  dropped: number;
  /** Lost because an insert failed (a whole batch, or one event the database refused). */
  failed: number;
  /** Not stored: the plugin is not a stored plugin (no UUID id) or was removed meanwhile. */
  skipped: number;
}

/** The recorder. */
export interface CallEventRecorder {
  /** Queues one event; never throws, never waits. Ignored after `close()`. */
  record(event: RecordableCallEvent): void;
  /** Writes everything queued so far (insert failures are logged, not thrown). */
  flush(): Promise<void>;
  /** Deletes events older than the retention period now; returns how many went. */
  prune(): Promise<number>;
  /** Flushes and stops; later `record()` calls are ignored. Safe to call twice. */
  close(): Promise<void>;
  stats(): CallEventRecorderStats;
}

/** Creates a recorder writing to `plugin_call_events` through `db`. */
export function createCallEventRecorder(options: CallEventRecorderOptions): CallEventRecorder {
  const { db } = options;
  const logger = options.logger ?? silentLogger;
  const flushMs = options.flushMs ?? 50;
  const maxWaitMs = Math.max(flushMs, options.maxWaitMs ?? 1_000);
  const batchSize = Math.max(1, options.batchSize ?? 200);
  const maxQueue = Math.max(1, options.maxQueue ?? 10_000);
  const counters = { written: 0, dropped: 0, failed: 0, skipped: 0 };
  const retentionDays = options.retentionDays ?? 30;
  const now = options.now ?? (() => new Date());
  let closed = false;

  // Retention: the table would otherwise grow with every call forever.
  async function prune(): Promise<number> {
    if (retentionDays <= 0) return 0;
    try {
      return await deletePluginCallEventsBefore(db, new Date(now().getTime() - retentionDays * 86_400_000));
    } catch (error) {
      logger.warn({ err: error }, 'plugin call events: could not prune old events');
      return 0;
    }
  }
  // One warning per burst of drops (not one per event), with the running total.
  let dropWarned = false;
  const writer = createBatchWriter<PluginCallEventWrite>({
    async write(batch) {
      const stored = await insertPluginCallEvents(db, batch);
      counters.written += stored;
      counters.skipped += batch.length - stored;
    },
    flushMs,
    maxWaitMs,
    batchSize,
    // One statement per batch: the embedded database runs in its own thread now (issue #28), so a
    // 200-row insert no longer holds the event loop, and each statement's fixed cost (~1.3 ms of
    // PGlite CPU) taken four times per batch was CPU the call path's threads shared 2 cores with.
    chunkSize: batchSize,
    maxQueue,
    onDrop() {
      counters.dropped += 1;
      if (!dropWarned) {
        dropWarned = true;
        logger.warn({ dropped: counters.dropped, maxQueue }, 'plugin call events: queue full; oldest events dropped');
      }
    },
    onError(error, batch) {
      counters.failed += batch.length;
      const event = batch[0];
      if (batch.length === 1 && event !== undefined && isRowError(error)) {
        // One event the database refused (the writer stored the rest of its batch). Only the
        // SQLSTATE is logged: an engine error's detail quotes the whole row, session id included.
        logger.warn(
          { sqlState: sqlStateOf(error) ?? 'unknown', plugin: event.pluginName, events: 1 },
          'plugin call events: the database refused one event; it was dropped and the rest of its batch stored',
        );
        return;
      }
      logger.error({ err: error, events: batch.length }, 'plugin call events: could not write a batch');
    },
  });

  function record(event: RecordableCallEvent): void {
    try {
      if (closed) return;
      // Specs built outside the plugin store (tests, local backends) have no row to point at.
      if (!isUuid(event.pluginId)) {
        counters.skipped += 1;
        return;
      }
      writer.push({
        pluginId: event.pluginId,
        pluginName: event.pluginName,
        toolName: event.tool,
        latencyMs: Number.isFinite(event.latencyMs) ? event.latencyMs : 0,
        outcome: event.outcome,
        errorClass: event.outcome === 'success' ? null : (event.errorClass ?? null),
        sessionId: event.sessionId ?? null,
        version: event.version ?? null,
        createdAt: event.at instanceof Date && !Number.isNaN(event.at.getTime()) ? event.at : new Date(),
      });
    } catch (error) {
      // Recording is best effort: a call must never fail because its event could not be queued.
      logger.warn({ err: error }, 'plugin call events: could not queue an event');
    }
  }

  async function flush(): Promise<void> {
    await writer.flush();
    if (dropWarned) {
      logger.warn({ dropped: counters.dropped }, 'plugin call events: queue drained after drops');
      dropWarned = false;
    }
  }

  return {
    record,
    flush,
    prune,
    async close() {
      if (closed) {
        await writer.flush();
        return;
      }
      closed = true;
      await flush();
    },
    stats: () => ({ queued: writer.size, ...counters }),
  };
}
