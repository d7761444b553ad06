/**
 * @module access/authorization-server/throttle
 * Brute-force protection of the sign-in page: failed attempts are counted per account and per
 * client address in a sliding window; past the limit, that account (or address) is refused
 * until the window's oldest failure ages out, whatever the password. A success clears the
 * account's count. In memory: the built-in server is the single-node default, and a restart
 * resetting counts costs an attacker a restart of the victim's server.
 */

/** Limits of the throttle. */
export interface ThrottleLimits {
  /** Failures per account within the window before it is locked (default 5). */
  perAccount: number;
  /** Failures per client address within the window (default 20). */
  perAddress: number;
  /** The window, ms (default 15 minutes). */
  windowMs: number;
}

export const DEFAULT_THROTTLE_LIMITS: ThrottleLimits = { perAccount: 5, perAddress: 20, windowMs: 15 * 60_000 };

/** Most keys remembered; the oldest are forgotten first (bounded memory under a spray). */
const MAX_KEYS = 10_000;

/** Counts failures and says when to refuse. */
export interface LoginThrottle {
  /** Seconds until `account` from `address` may try again, or 0 when it may now. */
  retryAfter(account: string, address: string): number;
  /** Records a failed attempt. */
  failed(account: string, address: string): void;
  /** Records a success (clears the account's failures). */
  succeeded(account: string): void;
}

export function createLoginThrottle(limits: ThrottleLimits = DEFAULT_THROTTLE_LIMITS, now: () => number = Date.now): LoginThrottle {
  const failures = new Map<string, number[]>();

  function recent(key: string): number[] {
    const cutoff = now() - limits.windowMs;
    const kept = (failures.get(key) ?? []).filter((at) => at > cutoff);
    if (kept.length === 0) failures.delete(key);
    else failures.set(key, kept);
    return kept;
  }

  function wait(key: string, limit: number): number {
    const times = recent(key);
    if (times.length < limit) return 0;
    const oldestThatCounts = times[times.length - limit]!;
    return Math.max(1, Math.ceil((oldestThatCounts + limits.windowMs - now()) / 1000));
  }

  function add(key: string): void {
    const times = recent(key);
    failures.delete(key); // re-insert: the map's order is recency, the first key the stalest
    failures.set(key, [...times, now()]);
    if (failures.size > MAX_KEYS) failures.delete(failures.keys().next().value!);
  }

  return {
    retryAfter: (account, address) => Math.max(wait(`account:${account}`, limits.perAccount), wait(`address:${address}`, limits.perAddress)),
    failed(account, address) {
      add(`account:${account}`);
      add(`address:${address}`);
    },
    succeeded(account) {
      failures.delete(`account:${account}`);
    },
  };
}
