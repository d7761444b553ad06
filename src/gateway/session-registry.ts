/**
 * @module gateway/session-registry
 * Session bookkeeping (seed 004 §6.4): sessions idle for longer than a TTL are collected, and
 * the registry is bounded, evicting the oldest session when full, so a long-running gateway
 * never leaks memory however many clients come and go. Pure: the caller closes what the
 * registry hands back.
 */

export interface SessionRegistryOptions {
  /** A session untouched for this long is collected, ms. */
  idleTtlMs: number;
  /** Most sessions held; adding one more evicts the oldest. */
  maxSessions: number;
  now: () => number;
}

interface Slot<T> {
  value: T;
  createdAt: number;
  lastActiveAt: number;
}

/** A bounded map of sessions with idle expiry. */
export class SessionRegistry<T> {
  readonly #options: Readonly<SessionRegistryOptions>;
  readonly #slots = new Map<string, Slot<T>>();

  constructor(options: SessionRegistryOptions) {
    if (!(options.idleTtlMs > 0) || !(options.maxSessions >= 1)) throw new RangeError('idleTtlMs and maxSessions must be positive');
    this.#options = Object.freeze({ ...options });
  }

  /** Adds a session; returns the sessions evicted to stay within `maxSessions` (oldest first). */
  add(id: string, value: T): Array<{ id: string; value: T }> {
    const now = this.#options.now();
    this.#slots.set(id, { value, createdAt: now, lastActiveAt: now });
    const evicted: Array<{ id: string; value: T }> = [];
    if (this.#slots.size > this.#options.maxSessions) {
      const oldest = [...this.#slots.entries()].filter(([key]) => key !== id).sort(([, a], [, b]) => a.createdAt - b.createdAt);
      for (const [key, slot] of oldest) {
        if (this.#slots.size <= this.#options.maxSessions) break;
        this.#slots.delete(key);
        evicted.push({ id: key, value: slot.value });
      }
    }
    return evicted;
  }

  /** The session, without marking it active. */
  peek(id: string): T | undefined {
    return this.#slots.get(id)?.value;
  }

  /** Marks a session active now. False when it is unknown. */
  touch(id: string): boolean {
    const slot = this.#slots.get(id);
    if (!slot) return false;
    slot.lastActiveAt = this.#options.now();
    return true;
  }

  /** Removes a session; returns it when it was there. */
  delete(id: string): T | undefined {
    const slot = this.#slots.get(id);
    this.#slots.delete(id);
    return slot?.value;
  }

  /** Removes and returns the sessions idle for longer than the TTL. */
  sweep(): Array<{ id: string; value: T }> {
    const now = this.#options.now();
    const expired: Array<{ id: string; value: T }> = [];
    for (const [id, slot] of this.#slots) {
      if (now - slot.lastActiveAt > this.#options.idleTtlMs) {
        this.#slots.delete(id);
        expired.push({ id, value: slot.value });
      }
    }
    return expired;
  }

  /** Live sessions. */
  values(): T[] {
    return [...this.#slots.values()].map((slot) => slot.value);
  }

  get size(): number {
    return this.#slots.size;
  }
}
