/**
 * @module store/batch-writer
 * Writes that must stay off a hot path (selection events, plugin call events): items are
 * queued and written in batches after `flushMs` or once `batchSize` are waiting. The queue
 * is bounded (the oldest item is dropped when full), a failing batch is reported and never
 * thrown at the producer, and one flush runs at a time.
 */

/** Options of `createBatchWriter`. */
export interface BatchWriterOptions<T> {
  /** Writes one batch; a throw is passed to `onError`, the items are not retried. */
  write(batch: T[]): Promise<void>;
  /** Delay before a partial batch is written (ms). */
  flushMs: number;
  batchSize: number;
  /** Most queued items; beyond it the oldest is dropped. */
  maxQueue: number;
  onDrop?(item: T): void;
  onError?(error: unknown, batch: T[]): void;
  /** Called once a batch left the queue, written or not. */
  onSettled?(batch: T[]): void;
}

/** A bounded, batching write queue. */
export interface BatchWriter<T> {
  push(item: T): void;
  /** Writes everything queued now (waits for a running flush first). */
  flush(): Promise<void>;
  readonly size: number;
}

/** Creates a batch writer. */
export function createBatchWriter<T>(options: BatchWriterOptions<T>): BatchWriter<T> {
  const batchSize = Math.max(1, options.batchSize);
  const maxQueue = Math.max(1, options.maxQueue);
  const queue: T[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> | undefined;

  async function flushOnce(): Promise<void> {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    while (queue.length > 0) {
      const batch = queue.splice(0, batchSize);
      try {
        await options.write(batch);
      } catch (error) {
        options.onError?.(error, batch);
      } finally {
        options.onSettled?.(batch);
      }
    }
  }

  async function flush(): Promise<void> {
    while (flushing) await flushing;
    if (queue.length === 0) return;
    flushing = flushOnce().finally(() => {
      flushing = undefined;
    });
    await flushing;
  }

  return {
    push(item) {
      if (queue.length >= maxQueue) options.onDrop?.(queue.shift()!);
      queue.push(item);
      if (queue.length >= batchSize) void flush();
      else if (timer === undefined) {
        timer = setTimeout(() => void flush(), options.flushMs);
        timer.unref?.();
      }
    },
    flush,
    get size() {
      return queue.length;
    },
  };
}
