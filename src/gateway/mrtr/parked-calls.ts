/**
 * @module gateway/mrtr/parked-calls
 * Calls paused on a 2026-07-28 client's input (issue #24). The revision has no server→client
 * requests: when a plugin asks the user something mid-call (a 2025 plugin's pushed
 * `elicitation/create` / `sampling/createMessage` / `roots/list`, or the input requests of a
 * 2026 plugin's `input_required`, which the runtime's client turns into the same requests), the
 * call is parked here, the client gets `input_required`, and its retry hands the answers to the
 * waiting plugin. A parked call lives for a bounded time per round and there is a bounded number
 * of them, per principal and in all; on expiry the plugin's waiting requests fail, the call is
 * aborted, and a late retry is told the call expired.
 */
import { randomBytes } from 'node:crypto';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ClientLink } from '../backend.ts';

/** A request the plugin made of the client, as the client will see it in `inputRequests`. */
export type InputRequest = Parameters<ClientLink['request']>[0];

/** Limits of paused calls. */
export interface ParkingLimits {
  /** How long a round waits for the client's retry, ms (default 5 min). */
  roundTtlMs: number;
  /** Most paused calls of one principal (default 16). */
  maxPerPrincipal: number;
  /** Most paused calls in all (default 512). */
  maxTotal: number;
  /** Most rounds of one call (default 16). */
  maxRounds: number;
}

export const DEFAULT_PARKING_LIMITS: Readonly<ParkingLimits> = Object.freeze({ roundTtlMs: 300_000, maxPerPrincipal: 16, maxTotal: 512, maxRounds: 16 });

interface Waiting {
  request: InputRequest;
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
  /** True once the client has been shown it. */
  asked: boolean;
}

/** How the call ended. */
export type CallOutcome = { result: unknown } | { error: unknown };

/** One call that may pause on the client's input. */
export class ParkedCall {
  readonly id = randomBytes(16).toString('base64url');
  readonly principal: string;
  /** Ends the call (expiry, or the first request's client went away before any input was asked). */
  readonly abort = new AbortController();
  /** The round the client answers next (the state it holds names it). */
  round = 0;
  /** Set while a retry is being answered: a second retry of the same round is refused. */
  busy = false;
  outcome: CallOutcome | undefined;
  /** Capabilities the plugin needed and the client had not declared (issue #24: -32021 when the call fails). */
  readonly refused = new Set<'sampling' | 'elicitation' | 'roots'>();
  readonly #waiting = new Map<string, Waiting>();
  #counter = 0;
  #wake: (() => void) | undefined;
  #lastAskAt = 0;

  constructor(principal: string) {
    this.principal = principal;
  }

  /** The plugin asks: waits for the client's answer (or the call's end). */
  ask(request: InputRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    // A 2026 plugin's own key is kept (the client sees the plugin's inputRequests as it made them);
    // a 2025 push has none, and gets one of Quiver's.
    this.#counter += 1;
    const own = request.key !== undefined && /^[\w.:-]{1,128}$/.test(request.key) && !this.#waiting.has(request.key) ? request.key : undefined;
    const key = own ?? `${request.method.split('/')[0]}-${this.#counter}`;
    return new Promise((resolve, reject) => {
      const stop = (): void => {
        if (this.#waiting.delete(key)) reject(signal.reason ?? new McpError(ErrorCode.RequestTimeout, 'the call ended before the client answered'));
      };
      signal.addEventListener('abort', stop, { once: true });
      this.#waiting.set(key, {
        request,
        asked: false,
        resolve: (result) => {
          signal.removeEventListener('abort', stop);
          resolve(result);
        },
        reject: (error) => {
          signal.removeEventListener('abort', stop);
          reject(error);
        },
      });
      this.#lastAskAt = Date.now();
      this.#wake?.();
    });
  }

  /** The call ended. */
  settle(outcome: CallOutcome): void {
    this.outcome = outcome;
    this.#wake?.();
  }

  /** Resolves when the call has ended or the plugin asked something the client has not seen yet. */
  changed(): Promise<void> {
    if (this.outcome || [...this.#waiting.values()].some((entry) => !entry.asked)) return Promise.resolve();
    return new Promise((resolve) => {
      this.#wake = () => {
        this.#wake = undefined;
        resolve();
      };
    });
  }

  /** How many requests the plugin has made in this call. */
  get asks(): number {
    return this.#counter;
  }

  /** Milliseconds since the plugin last asked something. */
  quietFor(): number {
    return Date.now() - this.#lastAskAt;
  }

  /** Everything the plugin waits on, marked as shown to the client: the next `inputRequests`. */
  takeRequests(): Record<string, InputRequest> {
    const requests: Record<string, InputRequest> = {};
    for (const [key, entry] of this.#waiting) {
      entry.asked = true;
      requests[key] = entry.request.params === undefined ? { method: entry.request.method } : { method: entry.request.method, params: entry.request.params };
    }
    return requests;
  }

  /** Keys the client was shown and has not answered. */
  unanswered(): string[] {
    return [...this.#waiting].filter(([, entry]) => entry.asked).map(([key]) => key);
  }

  /** The request waiting under `key`, if any. */
  waitingRequest(key: string): InputRequest | undefined {
    return this.#waiting.get(key)?.request;
  }

  /** Hands the client's answer to the plugin. */
  answer(key: string, result: Record<string, unknown>): void {
    const entry = this.#waiting.get(key);
    if (!entry) return;
    this.#waiting.delete(key);
    entry.resolve(result);
  }

  /** Fails every request still waiting and ends the call. */
  fail(error: unknown): void {
    for (const [key, entry] of this.#waiting) {
      this.#waiting.delete(key);
      entry.reject(error);
    }
    this.abort.abort(error);
  }
}

/** The paused calls of one gateway, bounded in number and time. */
export class ParkedCalls {
  readonly limits: ParkingLimits;
  readonly #calls = new Map<string, { call: ParkedCall; timer: NodeJS.Timeout }>();

  constructor(limits: Partial<ParkingLimits> = {}) {
    this.limits = { ...DEFAULT_PARKING_LIMITS, ...limits };
  }

  /** Number of paused calls. */
  get size(): number {
    return this.#calls.size;
  }

  /**
   * Holds `call` for one more round (from now until `roundTtlMs` later); a refusal text when the
   * limits do not allow it (then the caller fails the call's requests with it).
   */
  hold(call: ParkedCall): string | undefined {
    const held = this.#calls.get(call.id);
    if (held) clearTimeout(held.timer);
    else {
      if (this.#calls.size >= this.limits.maxTotal) return `Quiver holds its most calls waiting on a client's input (${this.limits.maxTotal})`;
      const mine = [...this.#calls.values()].filter((entry) => entry.call.principal === call.principal).length;
      if (mine >= this.limits.maxPerPrincipal) return `this client already has ${mine} calls waiting on its input, the most Quiver holds for one principal`;
    }
    if (call.round >= this.limits.maxRounds) return `the call asked for input in more than ${this.limits.maxRounds} rounds`;
    const seconds = Math.round(this.limits.roundTtlMs / 1000);
    const timer = setTimeout(() => {
      this.#calls.delete(call.id);
      call.fail(new McpError(ErrorCode.RequestTimeout, `the client did not answer within ${seconds} s, so Quiver ended the call`));
    }, this.limits.roundTtlMs);
    timer.unref();
    this.#calls.set(call.id, { call, timer });
    return undefined;
  }

  /** The paused call with this id, if it is still held. */
  get(id: string): ParkedCall | undefined {
    return this.#calls.get(id)?.call;
  }

  /** Stops holding a call (it ended, or its last answer was delivered). */
  release(call: ParkedCall): void {
    const held = this.#calls.get(call.id);
    if (!held) return;
    clearTimeout(held.timer);
    this.#calls.delete(call.id);
  }

  /** Ends every paused call (gateway close). */
  close(): void {
    for (const { call, timer } of this.#calls.values()) {
      clearTimeout(timer);
      call.fail(new McpError(ErrorCode.ConnectionClosed, 'Quiver is shutting down'));
    }
    this.#calls.clear();
  }
}
