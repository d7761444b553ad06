/**
 * @module runtime/replica-limits
 * A plugin's declared rate limits and concurrency caps held across every replica sharing one
 * PostgreSQL (issue #16; rows and SQL in store/repositories/shared-limits.ts). The supervisor
 * uses these only for limits a plugin declares and only when the app runs on PostgreSQL;
 * plugins without limits, and the embedded single-node store, keep the in-memory limiters
 * (no database round trip on their hot path).
 *
 * - Tokens: one atomic statement per bucket, on the database's clock.
 * - Slots: a call holds a lease row for its slot, renewed every third of `leaseTtlMs` while it
 *   runs and deleted when it ends; a replica that dies stops renewing, so its slots come free
 *   within `leaseTtlMs`. A call waiting for a slot polls (jittered, from `pollMs` doubling up to
 *   8 × `pollMs`) until one frees or its deadline passes; at most `maxQueue` calls of this replica wait at once. Waiting is not
 *   first-come-first-served across replicas.
 * - If the database fails, the call falls back to this replica's in-memory limiter (logged):
 *   the limit then holds per replica until the database answers again.
 */
import { randomBytes } from 'node:crypto';
import { ErrorCodes, QuiverError, isQuiverError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import type { Database } from '../store/database.ts';
import { claimConcurrencySlot, releaseConcurrencySlot, renewConcurrencySlot, takeSharedTokens } from '../store/repositories/shared-limits.ts';
import { sleep } from './process-tree.ts';
import { bucketCapacity, type TakeResult } from './rate-limit.ts';
import { createSemaphore, type Semaphore } from './semaphore.ts';
import type { BucketConfig } from './types.ts';

/** A bucket as the supervisor names it: `scope` is the plugin (or plugin/tool) it limits. */
export interface ScopedBucket {
  scope: string;
  config: BucketConfig;
}

/** Replica-wide limiters. */
export interface SharedLimits {
  /** Takes one token from every bucket across all replicas, or none; `fallback` answers when the database cannot. */
  take(buckets: readonly ScopedBucket[], fallback: () => TakeResult): Promise<TakeResult>;
  /** A semaphore of `limit` slots shared by every replica. */
  semaphore(scope: string, limit: number, maxQueue: number, label: string): Semaphore;
}

/** Options of `createSharedLimits`. */
export interface SharedLimitsOptions {
  db: Database;
  logger?: Logger;
  /** How long a slot stays held without renewal (ms, default 30 000). */
  leaseTtlMs?: number;
  /** Base interval between claims while waiting for a slot (ms, default 25). */
  pollMs?: number;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

/** Creates the replica-wide limiters over `db` (PostgreSQL; PGlite works too, for one node). */
export function createSharedLimits(options: SharedLimitsOptions): SharedLimits {
  const { db } = options;
  const logger = options.logger ?? silentLogger;
  const leaseTtlMs = Math.max(1_000, options.leaseTtlMs ?? 30_000);
  const pollMs = Math.max(1, options.pollMs ?? 25);
  const replica = randomBytes(6).toString('hex');
  let lastWarning = 0;

  function warnFallback(what: string, error: unknown): void {
    if (Date.now() - lastWarning < 10_000) return; // once per 10 s, not once per call
    lastWarning = Date.now();
    logger.warn({ err: error, what }, 'replica-wide limits unavailable; using this replica\'s own limits');
  }

  function semaphore(scope: string, limit: number, maxQueue: number, label: string): Semaphore {
    const local = createSemaphore(limit, maxQueue, label);
    let held = 0;
    let waiting = 0;

    function holdLease(slot: number, holder: string): () => void {
      held += 1;
      const renewal = setInterval(() => {
        renewConcurrencySlot(db, { scope, slot, holder, ttlMs: leaseTtlMs }).catch((error: unknown) => warnFallback('lease renewal', error));
      }, Math.floor(leaseTtlMs / 3));
      renewal.unref();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held -= 1;
        clearInterval(renewal);
        releaseConcurrencySlot(db, { scope, slot, holder }).catch((error: unknown) => warnFallback('lease release', error));
      };
    }

    async function waitForSlot(holder: string, signal: AbortSignal | undefined): Promise<number> {
      if (waiting >= maxQueue) {
        throw new QuiverError(ErrorCodes.rateLimited, `too many calls waiting for ${label} (concurrency limit ${limit} across replicas, queue ${maxQueue})`, {
          details: { reason: 'concurrency', limit, maxQueue, shared: true },
        });
      }
      waiting += 1;
      try {
        // Backing off to 8 × pollMs keeps a long queue from hammering the database.
        for (let delay = pollMs; ; delay = Math.min(delay * 2, pollMs * 8)) {
          await sleep(delay + Math.random() * delay, signal);
          if (signal?.aborted) throw abortReason(signal);
          const slot = await claimConcurrencySlot(db, { scope, limit, holder, ttlMs: leaseTtlMs });
          if (slot !== undefined) return slot;
        }
      } finally {
        waiting -= 1;
      }
    }

    return {
      async acquire(signal) {
        if (signal?.aborted) throw abortReason(signal);
        const holder = `${replica}:${randomBytes(6).toString('hex')}`;
        let slot: number | undefined;
        try {
          slot = (await claimConcurrencySlot(db, { scope, limit, holder, ttlMs: leaseTtlMs })) ?? (await waitForSlot(holder, signal));
        } catch (error) {
          // A full queue or the call's own deadline is an answer; anything else is the database failing.
          if (isQuiverError(error, ErrorCodes.rateLimited) || signal?.aborted) throw error;
          warnFallback('slot claim', error);
          return local.acquire(signal);
        }
        return holdLease(slot, holder);
      },
      inUse: () => held + local.inUse(),
      waiting: () => waiting + local.waiting(),
    };
  }

  return {
    async take(buckets, fallback) {
      try {
        return await takeSharedTokens(
          db,
          buckets.map(({ scope, config }) => ({ scope, capacity: bucketCapacity(config), ratePerMs: config.requestsPerMinute / 60_000 })),
        );
      } catch (error) {
        warnFallback('token bucket', error);
        return fallback();
      }
    },
    semaphore,
  };
}
