/**
 * @module runtime/breaker
 * The circuit breaker of seed 000 §5.2 as a small state machine with an injected clock:
 * closed → (failureThreshold consecutive failures) → open → (after `timeout` ms) →
 * half-open, which admits `halfOpenRequests` trial calls at a time; `successThreshold`
 * trial successes close it, any trial failure opens it again.
 */
import type { CircuitBreakerConfig, Clock } from './types.ts';

export type BreakerState = 'closed' | 'open' | 'half-open';

/** Permission for one call; release it exactly once with how the call ended. */
export interface BreakerPermit {
  release(outcome: BreakerOutcome): void;
}

/** The result of asking the breaker for permission to call. */
export type BreakerDecision = { allowed: true; permit: BreakerPermit } | { allowed: false; retryAfterMs: number };

/** How a permitted call ended; `ignored` returns the permit without counting (caller cancelled). */
export type BreakerOutcome = 'success' | 'failure' | 'ignored';

/** A read-only view of a breaker for health reports. */
export interface BreakerSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  halfOpenSuccesses: number;
  inFlightTrials: number;
  openedAt: number | undefined;
  /** ms until an open breaker lets a trial through (0 when not open). */
  retryAfterMs: number;
}

/** A circuit breaker: `tryAcquire()` before a call, `permit.release(outcome)` after it. */
export interface CircuitBreaker {
  state(): BreakerState;
  tryAcquire(): BreakerDecision;
  snapshot(): BreakerSnapshot;
  reset(): void;
}

/** Creates a breaker with `config` (seed 000 §5.2 fields) reading time from `clock`. */
export function createCircuitBreaker(config: CircuitBreakerConfig, clock: Clock): CircuitBreaker {
  let state: BreakerState = 'closed';
  let consecutiveFailures = 0;
  let halfOpenSuccesses = 0;
  let inFlightTrials = 0;
  let openedAt: number | undefined;
  // Every state change starts a new epoch: a permit only counts in the epoch that issued it,
  // so a slow call admitted while closed cannot decide a half-open trial (and vice versa).
  let epoch = 0;

  function enter(next: BreakerState): void {
    state = next;
    epoch += 1;
    halfOpenSuccesses = 0;
    inFlightTrials = 0;
    if (next === 'open') openedAt = clock.now();
    if (next === 'closed') {
      openedAt = undefined;
      consecutiveFailures = 0;
    }
  }

  function refresh(): void {
    if (state === 'open' && openedAt !== undefined && clock.now() - openedAt >= config.timeout) enter('half-open');
  }

  function retryAfter(): number {
    if (state !== 'open' || openedAt === undefined) return 0;
    return Math.max(0, openedAt + config.timeout - clock.now());
  }

  function settle(permitEpoch: number, trial: boolean, outcome: BreakerOutcome): void {
    refresh();
    if (permitEpoch !== epoch) return;
    if (trial) {
      inFlightTrials = Math.max(0, inFlightTrials - 1);
      if (outcome === 'ignored') return;
      if (outcome === 'failure') return enter('open');
      halfOpenSuccesses += 1;
      if (halfOpenSuccesses >= config.successThreshold) enter('closed');
      return;
    }
    if (outcome === 'ignored') return;
    if (outcome === 'success') {
      consecutiveFailures = 0;
      return;
    }
    consecutiveFailures += 1;
    if (consecutiveFailures >= config.failureThreshold) enter('open');
  }

  function permitFor(trial: boolean): BreakerPermit {
    const permitEpoch = epoch;
    let released = false;
    return {
      release(outcome) {
        if (released) return;
        released = true;
        settle(permitEpoch, trial, outcome);
      },
    };
  }

  return {
    state() {
      refresh();
      return state;
    },
    tryAcquire() {
      refresh();
      if (state === 'closed') return { allowed: true, permit: permitFor(false) };
      if (state === 'open') return { allowed: false, retryAfterMs: Math.max(1, retryAfter()) };
      if (inFlightTrials >= config.halfOpenRequests) return { allowed: false, retryAfterMs: 1 };
      inFlightTrials += 1;
      return { allowed: true, permit: permitFor(true) };
    },
    snapshot() {
      refresh();
      return { state, consecutiveFailures, halfOpenSuccesses, inFlightTrials, openedAt, retryAfterMs: retryAfter() };
    },
    reset() {
      enter('closed');
    },
  };
}
