/**
 * @module gateway/turn-gate
 * Paces the start of MCP requests over event-loop turns (issue #18 finding 9). Node's libuv
 * (≥ 1.45, libuv PR #3696) accepts ONE new TCP connection per event-loop iteration. Under
 * load an iteration ran every request whose bytes had arrived, each to completion (a search
 * is in-memory, so nothing yields), so iterations grew to hundreds of milliseconds and a burst
 * of new connections sat in the kernel's accept queue for 9–30 s: measured with `ss`, 147
 * connections waited ~9 s while requests on already-open connections took 4 ms in the server.
 *
 * The gate lets at most `perTurn` requests start per iteration; the others wait, in arrival
 * order, for the following turns (`setImmediate`, check phase). Total work is unchanged; the
 * loop only comes back to poll (and accept) every few requests instead of after all of them.
 * Too many waiting requests are refused at once with `overloaded` (503 + Retry-After).
 */
import { overloaded } from './admission.ts';

export interface TurnGateOptions {
  /** Requests that may start per event-loop iteration. */
  perTurn: number;
  /** Most requests waiting for a turn; beyond it a request is refused. */
  maxWaiting: number;
}

/**
 * Defaults: one request per iteration keeps an iteration at one request's work (a few ms),
 * so a burst of 150 new connections was accepted in about 2 s instead of 9 s (4 per turn:
 * 4.5 s) on the shared 2-core machine; an iteration's own cost is microseconds.
 */
export const DEFAULT_TURN_GATE: Readonly<TurnGateOptions> = Object.freeze({ perTurn: 1, maxWaiting: 4096 });

/** Paces request starts over event-loop iterations; see the module comment. */
export class TurnGate {
  readonly #options: Readonly<TurnGateOptions>;
  readonly #waiting: Array<() => void> = [];
  #started = 0;
  #scheduled = false;

  constructor(options: TurnGateOptions = DEFAULT_TURN_GATE) {
    if (!(options.perTurn >= 1) || !(options.maxWaiting >= 0)) throw new RangeError('perTurn must be at least 1 and maxWaiting at least 0');
    this.#options = Object.freeze({ ...options });
  }

  /**
   * Resolves when the caller may start: at once while this iteration has room, else at a
   * later iteration. Rejects with `overloaded` when `maxWaiting` requests already wait.
   */
  enter(): Promise<void> {
    if (this.#waiting.length === 0 && this.#started < this.#options.perTurn) {
      this.#started++;
      this.#schedule();
      return Promise.resolve();
    }
    if (this.#waiting.length >= this.#options.maxWaiting) return Promise.reject(overloaded(`${this.#waiting.length} requests waiting for a turn`));
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.#schedule();
    });
  }

  /** Requests waiting for a turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // An immediate queued from the check phase runs in the NEXT iteration, after its poll phase.
    setImmediate(() => this.#nextTurn());
  }

  #nextTurn(): void {
    this.#scheduled = false;
    this.#started = 0;
    while (this.#started < this.#options.perTurn && this.#waiting.length > 0) {
      this.#started++;
      this.#waiting.shift()!();
    }
    // Keep turning while there is traffic; an idle gate schedules nothing.
    if (this.#started > 0) this.#schedule();
  }
}
