/**
 * @module access/authorization-server/password
 * Password hashing for the built-in authorization server's accounts: scrypt (Node's crypto, a
 * memory-hard KDF) with a random 16-byte salt, stored as `scrypt$<logN>$<r>$<p>$<salt>$<hash>`
 * so the cost can be raised later without breaking stored hashes. Comparison in constant time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG_N = 15; // N = 32768: ~50-100 ms on one core, 32 MiB of memory per hash
const R = 8;
const P = 1;
const KEY_BYTES = 32;

/** Passwords shorter than this are refused at sign-up. */
export const MIN_PASSWORD_LENGTH = 12;
/** Longer inputs are refused before hashing (a huge password is a cheap way to burn CPU). */
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** The stored form of `password`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, LOG_N, R, P);
  return `scrypt$${LOG_N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `password` matches `stored`; false for any malformed stored value. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![logN, r, p].every((n) => Number.isInteger(n) && n > 0) || logN > 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (expected.length !== KEY_BYTES || password.length > MAX_PASSWORD_LENGTH) return false;
  const actual = await derive(password, Buffer.from(parts[4]!, 'base64url'), logN, r, p);
  return timingSafeEqual(actual, expected);
}

/** A hash of nothing anyone knows: verified against when an account does not exist, so its absence takes as long to learn. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(24).toString('base64url'));
  return decoy;
}
