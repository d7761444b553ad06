/**
 * @module gateway/admission
 * Bounded concurrency for the gateway's own work (issue #18 finding 9): at most
 * `maxConcurrent` searches run at once, at most `maxQueued` wait, and none waits longer than
 * `maxWaitMs`. Beyond that a request is refused at once with `rate_limited` and a retry hint,
 * which the fronts turn into HTTP 503 + `Retry-After` or a JSON-RPC error: an overloaded
 * gateway answers quickly instead of letting clients sit in a queue until they time out.
 */
import { QuiverError, ErrorCodes, isQuiverError } from '../core/errors.ts';

export interface AdmissionOptions {
  maxConcurrent: number;
  maxQueued: number;
  /** Longest a request may wait for a slot, ms. */
  maxWaitMs: number;
}

interface Waiter {
  start: () => void;
  timer: ReturnType<typeof setTimeout>;
}

/** The error an overloaded gateway answers with; `retryAfterSeconds` is in its details. */
export function overloaded(reason: string, retryAfterSeconds = 1): QuiverError {
  return new QuiverError(ErrorCodes.rateLimited, `Quiver is overloaded (${reason}); retry in ${retryAfterSeconds} s`, { details: { retryAfterSeconds } });
}

/** The retry hint of an `overloaded` refusal, or undefined for any other error. */
export function overloadRetryAfter(error: unknown): number | undefined {
  if (!isQuiverError(error, ErrorCodes.rateLimited)) return undefined;
  const seconds = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return typeof seconds === 'number' ? seconds : undefined;
}

/** A counting semaphore with a bounded, time-limited queue. */
export class Admission {
  readonly #options: Readonly<AdmissionOptions>;
  readonly #queue: Waiter[] = [];
  #active = 0;

  constructor(options: AdmissionOptions) {
    if (!(options.maxConcurrent >= 1) || !(options.maxQueued >= 0) || !(options.maxWaitMs >= 1)) {
      throw new RangeError('maxConcurrent and maxWaitMs must be at least 1, maxQueued at least 0');
    }
    this.#options = Object.freeze({ ...options });
  }

  /** Runs `work` when a slot is free; rejects with `overloaded` when the queue is full or the wait too long. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#active >= this.#options.maxConcurrent) await this.#wait();
    else this.#active++;
    try {
      return await work();
    } finally {
      this.#release();
    }
  }

  /** True when a new request would be refused at once. */
  get saturated(): boolean {
    return this.#active >= this.#options.maxConcurrent && this.#queue.length >= this.#options.maxQueued;
  }

  /** Requests running and waiting. */
  get load(): { active: number; queued: number } {
    return { active: this.#active, queued: this.#queue.length };
  }

  #wait(): Promise<void> {
    if (this.#queue.length >= this.#options.maxQueued) return Promise.reject(overloaded(`${this.#queue.length} requests waiting`));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        // The releasing request hands its slot over: #active stays as it is.
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const index = this.#queue.indexOf(waiter);
          if (index >= 0) this.#queue.splice(index, 1);
          reject(overloaded(`no slot within ${this.#options.maxWaitMs} ms`));
        }, this.#options.maxWaitMs),
      };
      waiter.timer.unref?.();
      this.#queue.push(waiter);
    });
  }

  #release(): void {
    const next = this.#queue.shift();
    if (next) next.start();
    else this.#active--;
  }
}
