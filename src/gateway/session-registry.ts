/**
 * @module gateway/session-registry
 * Session bookkeeping (seed 004 §6.4) with limits per tenant (issue #18 finding 3). Every
 * session has an owner: the API key that opened it and, when it has one, its organisation.
 * - An owner over its own limit (per key, per organisation) loses its own least recently
 *   active session: a tenant can only ever push out its own sessions.
 * - At the global cap, idle-expired sessions are swept first; if none, the new session is
 *   refused (the caller answers 503 with Retry-After), never another tenant's live one taken.
 * - Sessions idle for longer than the TTL are collected by `sweep`.
 * Pure: the caller closes what the registry hands back.
 */

/** Who a session belongs to, for the per-tenant limits. */
export interface SessionOwner {
  /** The caller's credential (an API key id); sessions of one key share its limit. */
  key: string;
  /** The organisation, or null (then only the per-key limit applies). */
  org: string | null;
}

export interface SessionRegistryOptions {
  /** A session untouched for this long is collected, ms. */
  idleTtlMs: number;
  /** Most sessions held in all; beyond it new sessions are refused. */
  maxSessions: number;
  /** Most sessions one key holds; beyond it the key's least recently active one goes (default: maxSessions). */
  maxSessionsPerKey?: number;
  /** Most sessions one organisation holds; beyond it its least recently active one goes (default: maxSessions). */
  maxSessionsPerOrg?: number;
  now: () => number;
}

/** A session the registry let go of. */
export interface ReleasedSession<T> {
  id: string;
  value: T;
  reason: 'expired' | 'key-limit' | 'org-limit';
}

/** The outcome of `add`. */
export type AddResult<T> =
  | { admitted: true; released: Array<ReleasedSession<T>> }
  /** Full of live sessions: nothing was added; `released` holds what expired on the way. */
  | { admitted: false; retryAfterMs: number; released: Array<ReleasedSession<T>> };

interface Slot<T> {
  value: T;
  owner: SessionOwner;
  createdAt: number;
  lastActiveAt: number;
}

/** A bounded map of sessions with idle expiry and per-tenant limits. */
export class SessionRegistry<T> {
  readonly #options: Readonly<Required<SessionRegistryOptions>>;
  readonly #slots = new Map<string, Slot<T>>();
  readonly #byKey = new Map<string, Set<string>>();
  readonly #byOrg = new Map<string, Set<string>>();

  constructor(options: SessionRegistryOptions) {
    const resolved: Required<SessionRegistryOptions> = {
      ...options,
      maxSessionsPerKey: options.maxSessionsPerKey ?? options.maxSessions,
      maxSessionsPerOrg: options.maxSessionsPerOrg ?? options.maxSessions,
    };
    for (const name of ['idleTtlMs', 'maxSessions', 'maxSessionsPerKey', 'maxSessionsPerOrg'] as const) {
      if (!(resolved[name] >= 1)) throw new RangeError(`${name} must be at least 1`);
    }
    this.#options = Object.freeze(resolved);
  }

  /**
   * Whether a session of `owner` would be admitted now (expired sessions are swept and
   * returned first). Lets a caller refuse before doing the work of opening a session.
   */
  admission(owner: SessionOwner): { admitted: boolean; retryAfterMs: number; released: Array<ReleasedSession<T>> } {
    const released: Array<ReleasedSession<T>> = [];
    if (this.#slots.size >= this.#options.maxSessions) released.push(...this.sweep());
    // An owner at its own limit replaces one of its own sessions: the total does not grow.
    const replacesOwn = this.#ownLimitReached(owner) !== undefined;
    const admitted = replacesOwn || this.#slots.size < this.#options.maxSessions;
    return { admitted, retryAfterMs: admitted ? 0 : this.#retryAfterMs(), released };
  }

  /** Adds a session for `owner`, applying its limits first; see the module comment. */
  add(id: string, value: T, owner: SessionOwner): AddResult<T> {
    const { admitted, retryAfterMs, released } = this.admission(owner);
    if (!admitted) return { admitted: false, retryAfterMs, released };
    for (let reason = this.#ownLimitReached(owner); reason !== undefined; reason = this.#ownLimitReached(owner)) {
      const group = reason === 'key-limit' ? this.#byKey.get(owner.key)! : this.#byOrg.get(owner.org!)!;
      const victim = this.#leastRecentlyActive(group);
      const slot = this.#slots.get(victim)!;
      this.#remove(victim);
      released.push({ id: victim, value: slot.value, reason });
    }
    const now = this.#options.now();
    this.#slots.set(id, { value, owner: { ...owner }, createdAt: now, lastActiveAt: now });
    this.#group(this.#byKey, owner.key).add(id);
    if (owner.org !== null) this.#group(this.#byOrg, owner.org).add(id);
    return { admitted: true, released };
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
    if (slot) this.#remove(id);
    return slot?.value;
  }

  /** Removes and returns the sessions idle for longer than the TTL. */
  sweep(): Array<ReleasedSession<T>> {
    const now = this.#options.now();
    const expired: Array<ReleasedSession<T>> = [];
    for (const [id, slot] of this.#slots) {
      if (now - slot.lastActiveAt > this.#options.idleTtlMs) {
        this.#remove(id);
        expired.push({ id, value: slot.value, reason: 'expired' });
      }
    }
    return expired;
  }

  /** Live sessions. */
  values(): T[] {
    return [...this.#slots.values()].map((slot) => slot.value);
  }

  /** Live sessions of one key. */
  countForKey(key: string): number {
    return this.#byKey.get(key)?.size ?? 0;
  }

  get size(): number {
    return this.#slots.size;
  }

  #ownLimitReached(owner: SessionOwner): 'key-limit' | 'org-limit' | undefined {
    if (this.countForKey(owner.key) >= this.#options.maxSessionsPerKey) return 'key-limit';
    if (owner.org !== null && (this.#byOrg.get(owner.org)?.size ?? 0) >= this.#options.maxSessionsPerOrg) return 'org-limit';
    return undefined;
  }

  #leastRecentlyActive(ids: Set<string>): string {
    let best: string | undefined;
    let bestAt = Infinity;
    for (const id of ids) {
      const at = this.#slots.get(id)!.lastActiveAt;
      if (at < bestAt) {
        best = id;
        bestAt = at;
      }
    }
    return best!;
  }

  /** When the least recently active session will have expired (at least 1 s away). */
  #retryAfterMs(): number {
    const now = this.#options.now();
    let soonest = Infinity;
    for (const slot of this.#slots.values()) soonest = Math.min(soonest, slot.lastActiveAt + this.#options.idleTtlMs - now);
    return Math.max(1000, Number.isFinite(soonest) ? soonest : 1000);
  }

  #group(index: Map<string, Set<string>>, name: string): Set<string> {
    let group = index.get(name);
    if (!group) index.set(name, (group = new Set()));
    return group;
  }

  #remove(id: string): void {
    const slot = this.#slots.get(id);
    if (!slot) return;
    this.#slots.delete(id);
    const byKey = this.#byKey.get(slot.owner.key);
    byKey?.delete(id);
    if (byKey?.size === 0) this.#byKey.delete(slot.owner.key);
    if (slot.owner.org !== null) {
      const byOrg = this.#byOrg.get(slot.owner.org);
      byOrg?.delete(id);
      if (byOrg?.size === 0) this.#byOrg.delete(slot.owner.org);
    }
  }
}
