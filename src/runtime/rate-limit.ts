/**
 * @module runtime/rate-limit
 * Token buckets for the PID's rateLimits (seed 000 §3.2.4): each bucket holds up to `burst`
 * tokens and refills at `requestsPerMinute / 60` tokens per second. Time comes from an
 * injected clock, so the arithmetic is tested without waiting.
 */
import type { BucketConfig, Clock } from './types.ts';

/** The result of asking a bucket for a token. */
export type TakeResult = { ok: true } | { ok: false; retryAfterMs: number };

/** A token bucket. */
export interface TokenBucket {
  /** Whether a token is available now, without taking it. */
  peek(): TakeResult;
  /** Takes one token if available. */
  take(): TakeResult;
  /** Tokens available now (fractional). */
  available(): number;
}

/** A bucket's size: `burst`, else one second's worth of requests (at least 1). */
export function bucketCapacity(config: BucketConfig): number {
  return config.burst ?? Math.max(1, Math.ceil(config.requestsPerMinute / 60));
}

/** Creates a token bucket that starts full. */
export function createTokenBucket(config: BucketConfig, clock: Clock): TokenBucket {
  const ratePerMs = config.requestsPerMinute / 60_000;
  const capacity = bucketCapacity(config);
  let tokens = capacity;
  let updatedAt = clock.now();

  function refill(): void {
    const now = clock.now();
    if (now > updatedAt) tokens = Math.min(capacity, tokens + (now - updatedAt) * ratePerMs);
    updatedAt = Math.max(updatedAt, now);
  }

  function check(): TakeResult {
    refill();
    if (tokens >= 1) return { ok: true };
    return { ok: false, retryAfterMs: Math.max(1, Math.ceil((1 - tokens) / ratePerMs)) };
  }

  return {
    peek: check,
    take() {
      const result = check();
      if (result.ok) tokens -= 1;
      return result;
    },
    available() {
      refill();
      return tokens;
    },
  };
}

/** Takes one token from every bucket, or from none when any is empty (reporting the longest wait). */
export function takeAll(buckets: readonly TokenBucket[]): TakeResult {
  let retryAfterMs = 0;
  for (const bucket of buckets) {
    const result = bucket.peek();
    if (!result.ok) retryAfterMs = Math.max(retryAfterMs, result.retryAfterMs);
  }
  if (retryAfterMs > 0) return { ok: false, retryAfterMs };
  for (const bucket of buckets) bucket.take();
  return { ok: true };
}
