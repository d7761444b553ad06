/**
 * @module runtime/supervisor/deadline
 * The time limit of one request, as an AbortSignal: aborted with a `timeout` error when the
 * time runs out and with a `cancelled` error when the caller's own signal aborts. The clock
 * can be paused while a plugin starts (its handshake has its own `startTimeoutMs`, so a cold
 * start does not eat the call's time) and restarted per attempt.
 */
import { ErrorCodes, QuiverError } from '../../core/errors.ts';
import type { Clock } from '../types.ts';

/** The deadline of one request. */
export interface Deadline {
  signal: AbortSignal;
  /** Stops the clock (while a plugin starts: its handshake has its own startTimeoutMs). */
  pause(): void;
  /** Gives the request its full timeout from now (the timeout is per attempt). */
  restart(): void;
  /** ms left before the deadline fires. */
  remaining(): number;
  /** True once the deadline fired (not when the caller cancelled). */
  timedOut(): boolean;
  /** Clears the timer and stops listening to the caller's signal. */
  dispose(): void;
}

/** Who and what a deadline is for, to name them in its errors. */
export interface DeadlineSubject {
  pluginId: string;
  pluginName: string;
}

/** Starts a deadline of `timeoutMs` for `what` (e.g. `tools/call 'search'`), following `outer` for cancellation. */
export function createDeadline(subject: DeadlineSubject, what: string, timeoutMs: number, outer: AbortSignal | undefined, clock: Clock): Deadline {
  const controller = new AbortController();
  let armedAt = clock.now();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const fire = (): void => {
    timedOut = true;
    controller.abort(
      new QuiverError(ErrorCodes.timeout, `plugin '${subject.pluginName}' did not answer ${what} within ${timeoutMs} ms`, {
        details: { pluginId: subject.pluginId, timeoutMs },
      }),
    );
  };
  const arm = (): void => {
    clearTimeout(timer);
    armedAt = clock.now();
    if (!controller.signal.aborted) timer = setTimeout(fire, timeoutMs);
  };
  arm();
  const onOuterAbort = (): void => controller.abort(new QuiverError('cancelled', `${what} was cancelled by the caller`, { kind: 'user' }));
  if (outer?.aborted) onOuterAbort();
  else outer?.addEventListener('abort', onOuterAbort, { once: true });
  return {
    signal: controller.signal,
    pause: () => clearTimeout(timer),
    restart: arm,
    remaining: () => Math.max(0, timeoutMs - (clock.now() - armedAt)),
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    },
  };
}

/** Settles like `promise`, or rejects with the signal's reason as soon as it aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, rejectPromise) => {
    const onAbort = (): void => rejectPromise(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        rejectPromise(error);
      },
    );
  });
}
