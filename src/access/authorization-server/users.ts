/**
 * @module access/authorization-server/users
 * The accounts of the built-in authorization server (issue #27). An admin invites a user into
 * one organisation with roles and the scopes their tokens may carry (`quiver user invite`, or
 * `POST /api/v1/users`); the invitation is a one-time sign-up token (shown once, stored as its
 * SHA-256, valid 7 days) with which the user sets a password (scrypt). Signing in checks the
 * password; a disabled account cannot sign in and its tokens stop working (the resource server
 * reads the account on every request). Administration never comes from a token: `admin` is not
 * a scope an account may hold.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { QuiverError, ErrorCodes, invalidInput, notFound } from '../../core/errors.ts';
import { sha256Hex } from '../../core/hash.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { Queryable } from '../../store/database.ts';
import {
  deleteAuthUser,
  findAuthUserByEmail,
  findAuthUserById,
  findAuthUserByInvite,
  insertAuthUser,
  listAuthUsers,
  redeemAuthUserInvite,
  setAuthUserDisabled,
  setAuthUserInvite,
  updateAuthUser,
  type AuthUserRow,
} from '../../store/repositories/auth-users.ts';
import { TOKEN_SCOPES } from '../oauth/token-principal.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, decoyHash, hashPassword, verifyPassword } from './password.ts';

/** How long an invitation link works. */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;

/** An account as shown to admins (no hashes). */
export interface AuthUser {
  id: string;
  email: string;
  orgId: string;
  roles: string[];
  scopes: string[];
  /** `invited` until the password is set, `active`, or `disabled`. */
  status: 'invited' | 'active' | 'disabled';
  inviteExpiresAt: string | null;
  createdAt: string;
}

const toUser = (row: AuthUserRow): AuthUser => ({
  id: row.id,
  email: row.email,
  orgId: row.orgId,
  roles: row.roles,
  scopes: row.scopes,
  status: row.disabledAt ? 'disabled' : row.passwordHash ? 'active' : 'invited',
  inviteExpiresAt: row.inviteExpiresAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
});

const email = z
  .string()
  .trim()
  .toLowerCase()
  .max(320)
  .regex(/^[^\s@<>"']+@[^\s@<>"']+$/, 'an email address (name@domain)');
const role = z.string().min(1).max(100).regex(/^[^\s,]+$/, 'a role has no spaces or commas');

/** Input of an invitation (and of a change: the same fields but email). */
export const inviteSchema = z
  .object({
    email,
    orgId: z.string().trim().min(1).max(200),
    roles: z.array(role).max(50).default([]),
    scopes: z.array(z.enum(TOKEN_SCOPES)).min(1).default(['mcp']),
  })
  .strict();
export const userChangeSchema = z
  .object({
    orgId: z.string().trim().min(1).max(200).optional(),
    roles: z.array(role).max(50).optional(),
    scopes: z.array(z.enum(TOKEN_SCOPES)).min(1).optional(),
  })
  .strict();

/** An invitation: the account and the one-time sign-up token (shown once). */
export interface Invitation {
  user: AuthUser;
  token: string;
  expiresAt: string;
}

export interface UserDirectory {
  invite(input: unknown): Promise<Invitation>;
  /** A new sign-up token for an existing account (a forgotten password; the old password stays until the new one is set). */
  reinvite(id: string): Promise<Invitation>;
  /** The account a live sign-up token belongs to (for the sign-up page), or undefined. */
  invitationOf(token: string): Promise<AuthUser | undefined>;
  /** Sets the password with a live sign-up token and spends it; throws when the token is not live or the password too weak. */
  signUp(token: string, password: string): Promise<AuthUser>;
  /** The account `email` and `password` sign in as, or undefined (unknown, wrong password, disabled, not signed up). */
  authenticate(email: string, password: string): Promise<AuthUser | undefined>;
  /** A live (not disabled, signed up) account by id. */
  active(id: string): Promise<AuthUser | undefined>;
  get(id: string): Promise<AuthUser>;
  list(): Promise<AuthUser[]>;
  update(id: string, change: unknown): Promise<AuthUser>;
  setDisabled(id: string, disabled: boolean): Promise<AuthUser>;
  remove(id: string): Promise<void>;
}

export function createUserDirectory(db: Queryable, now: () => Date = () => new Date()): UserDirectory {
  const newToken = () => randomBytes(32).toString('base64url');

  async function get(id: string): Promise<AuthUser> {
    const row = await findAuthUserById(db, id);
    if (!row) throw notFound('user', id);
    return toUser(row);
  }

  /** Finds an account by id or email (CLI users type either). */
  async function resolve(idOrEmail: string): Promise<AuthUserRow> {
    const row = (await findAuthUserById(db, idOrEmail)) ?? (idOrEmail.includes('@') ? await findAuthUserByEmail(db, idOrEmail.trim().toLowerCase()) : undefined);
    if (!row) throw notFound('user', idOrEmail);
    return row;
  }

  return {
    async invite(input) {
      const parsed = parseOrThrow(inviteSchema, input, 'invitation');
      const token = newToken();
      const expiresAt = new Date(now().getTime() + INVITE_TTL_MS);
      const id = randomUUID();
      const inserted = await insertAuthUser(db, { id, email: parsed.email, orgId: parsed.orgId, roles: [...new Set(parsed.roles)], scopes: [...new Set(parsed.scopes)], inviteHash: sha256Hex(token), inviteExpiresAt: expiresAt }, now());
      if (!inserted) throw new QuiverError(ErrorCodes.conflict, `a user with email '${parsed.email}' exists already (use 'quiver user reinvite' for a new sign-up link)`);
      return { user: await get(id), token, expiresAt: expiresAt.toISOString() };
    },
    async reinvite(idOrEmail) {
      const row = await resolve(idOrEmail);
      if (row.disabledAt) throw invalidInput(`user '${row.email}' is disabled; enable it first`);
      const token = newToken();
      const expiresAt = new Date(now().getTime() + INVITE_TTL_MS);
      await setAuthUserInvite(db, row.id, sha256Hex(token), expiresAt, now());
      return { user: await get(row.id), token, expiresAt: expiresAt.toISOString() };
    },
    async invitationOf(token) {
      const row = await findAuthUserByInvite(db, sha256Hex(token), now());
      return row ? toUser(row) : undefined;
    },
    async signUp(token, password) {
      if (password.length < MIN_PASSWORD_LENGTH) throw invalidInput(`the password needs at least ${MIN_PASSWORD_LENGTH} characters`);
      if (password.length > MAX_PASSWORD_LENGTH) throw invalidInput(`the password may have at most ${MAX_PASSWORD_LENGTH} characters`);
      const row = await redeemAuthUserInvite(db, sha256Hex(token), await hashPassword(password), now());
      if (!row) throw invalidInput('this sign-up link is not valid any more (used, expired or replaced); ask your admin for a new one');
      return toUser(row);
    },
    async authenticate(address, password) {
      const row = await findAuthUserByEmail(db, address.trim().toLowerCase());
      // The same scrypt work whether or not the account exists: timing does not tell which emails have accounts.
      const ok = await verifyPassword(password, row?.passwordHash ?? (await decoyHash()));
      if (!row || !ok || !row.passwordHash || row.disabledAt) return undefined;
      return toUser(row);
    },
    async active(id) {
      const row = await findAuthUserById(db, id);
      return row && row.passwordHash && !row.disabledAt ? toUser(row) : undefined;
    },
    get: async (id) => toUser(await resolve(id)),
    list: async () => (await listAuthUsers(db)).map(toUser),
    async update(idOrEmail, change) {
      const row = await resolve(idOrEmail);
      const parsed = parseOrThrow(userChangeSchema, change, 'user change');
      await updateAuthUser(db, row.id, { orgId: parsed.orgId ?? row.orgId, roles: [...new Set(parsed.roles ?? row.roles)], scopes: [...new Set(parsed.scopes ?? row.scopes)] }, now());
      return get(row.id);
    },
    async setDisabled(idOrEmail, disabled) {
      const row = await resolve(idOrEmail);
      await setAuthUserDisabled(db, row.id, disabled ? now() : null, now());
      return get(row.id);
    },
    async remove(idOrEmail) {
      const row = await resolve(idOrEmail);
      await deleteAuthUser(db, row.id);
    },
  };
}
