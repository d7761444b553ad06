/**
 * @module trust/decision-log
 * Egress decisions reach the store in batches, off the connection path (like the call event
 * recorder): `record` only queues; a timer or a full batch writes; `close` flushes the rest.
 * When the store fails the batch is dropped and logged (the proxy already logged each decision).
 */
import type { Logger } from '../core/logger.ts';
import type { PluginEgressDecision } from '../runtime/supervisor/api.ts';
import type { Database } from '../store/database.ts';
import { insertEgressDecisions, type EgressDecisionRow } from '../store/repositories/trust.ts';

export interface DecisionLog {
  record(decision: PluginEgressDecision): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createDecisionLog(options: { db: Database; logger: Logger; now: () => Date; flushMs?: number; batchSize?: number; maxQueue?: number }): DecisionLog {
  const { db, logger, now } = options;
  const flushMs = options.flushMs ?? 1_000;
  const batchSize = options.batchSize ?? 200;
  const maxQueue = options.maxQueue ?? 10_000;
  let queue: EgressDecisionRow[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let dropped = 0;

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = queue;
    queue = [];
    writing = writing.then(async () => {
      if (batch.length === 0) return;
      try {
        await insertEgressDecisions(db, batch);
      } catch (error) {
        logger.warn({ err: error, decisions: batch.length }, 'egress decisions could not be stored');
      }
    });
    return writing;
  };

  return {
    record(decision) {
      if (queue.length >= maxQueue) {
        // A plugin hammering a refused host must not grow memory without bound.
        if (dropped++ % 1000 === 0) logger.warn({ pluginId: decision.pluginId, dropped }, 'egress decision queue full; decisions dropped');
        return;
      }
      queue.push({ pluginId: decision.pluginId, host: decision.host, port: decision.port, allowed: decision.allowed, createdAt: now() });
      if (queue.length >= batchSize) void flush();
      else if (!timer) {
        timer = setTimeout(() => void flush(), flushMs);
        timer.unref();
      }
    },
    flush,
    close: flush,
  };
}
