/**
 * @module runtime/semaphore
 * A counting semaphore with a bounded FIFO queue: the per-plugin and per-tool concurrency
 * caps. A waiter gives up when its signal aborts (the call's deadline or the caller).
 */
import { QuiverError, ErrorCodes } from '../core/errors.ts';

/** A counting semaphore. */
export interface Semaphore {
  /** Waits for a slot; resolves to a release function (idempotent). */
  acquire(signal?: AbortSignal): Promise<() => void>;
  inUse(): number;
  waiting(): number;
}

/** Creates a semaphore with `limit` slots and at most `maxQueue` waiters; `label` names it in errors. */
export function createSemaphore(limit: number, maxQueue: number, label: string): Semaphore {
  let used = 0;
  const queue: Array<{ grant: () => void }> = [];

  function releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = queue.shift();
      if (next) next.grant();
      else used -= 1;
    };
  }

  return {
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
      if (used < limit) {
        used += 1;
        return Promise.resolve(releaser());
      }
      if (queue.length >= maxQueue) {
        return Promise.reject(
          new QuiverError(ErrorCodes.rateLimited, `too many calls waiting for ${label} (concurrency limit ${limit}, queue ${maxQueue})`, {
            details: { reason: 'concurrency', limit, maxQueue },
          }),
        );
      }
      return new Promise((resolve, reject) => {
        const entry = {
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve(releaser());
          },
        };
        const onAbort = (): void => {
          const index = queue.indexOf(entry);
          if (index >= 0) queue.splice(index, 1);
          reject(signal?.reason ?? new Error('aborted'));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(entry);
      });
    },
    inUse: () => used,
    waiting: () => queue.length,
  };
}
