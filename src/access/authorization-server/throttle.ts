/**
 * @module access/authorization-server/throttle
 * Brute-force protection of the sign-in page: failed attempts are counted per account and per
 * client address in a sliding window; past the limit, that account (or address) is refused
 * until the window's oldest failure ages out, whatever the password. A success clears the
 * account's count. The failures are kept in the database (`auth_login_failures`, hashed keys),
 * so a restart does not reset them and every replica sees the same counts.
 */
import { sha256Hex } from '../../core/hash.ts';
import type { Queryable } from '../../store/database.ts';
import { clearLoginFailures, nthRecentLoginFailure, recordLoginFailures } from '../../store/repositories/auth-login-failures.ts';

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

/** Counts failures and says when to refuse. */
export interface LoginThrottle {
  /** Seconds until `account` from `address` may try again, or 0 when it may now. */
  retryAfter(account: string, address: string): Promise<number>;
  /** Records a failed attempt. */
  failed(account: string, address: string): Promise<void>;
  /** Records a success (clears the account's failures). */
  succeeded(account: string): Promise<void>;
}

const accountKey = (account: string) => sha256Hex(`account:${account}`);
const addressKey = (address: string) => sha256Hex(`address:${address}`);

/** The throttle over `db`; `now` is the clock of the window (replicas' clocks agree to well within it). */
export function createLoginThrottle(db: Queryable, limits: ThrottleLimits = DEFAULT_THROTTLE_LIMITS, now: () => number = Date.now): LoginThrottle {
  /** Seconds until the failure that makes `key` reach `limit` leaves the window; 0 when under the limit. */
  async function wait(key: string, limit: number, at: number): Promise<number> {
    const oldestThatCounts = await nthRecentLoginFailure(db, key, new Date(at - limits.windowMs), limit);
    if (oldestThatCounts === undefined) return 0;
    return Math.max(1, Math.ceil((oldestThatCounts.getTime() + limits.windowMs - at) / 1000));
  }

  return {
    async retryAfter(account, address) {
      const at = now();
      const [byAccount, byAddress] = [await wait(accountKey(account), limits.perAccount, at), await wait(addressKey(address), limits.perAddress, at)];
      return Math.max(byAccount, byAddress);
    },
    async failed(account, address) {
      const at = now();
      await recordLoginFailures(db, [accountKey(account), addressKey(address)], new Date(at), new Date(at - limits.windowMs));
    },
    async succeeded(account) {
      await clearLoginFailures(db, accountKey(account));
    },
  };
}
