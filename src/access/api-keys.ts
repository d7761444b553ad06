/**
 * @module access/api-keys
 * API keys with scopes, bound optionally to a workspace, project, organisation, user, roles
 * and tier. A key is shown once at creation; only its SHA-256 is stored. There is no
 * default key: the first `quiver serve` creates an admin key and prints it once.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Database } from '../store/database.ts';
import {
  countLiveKeysWithScope,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  touchApiKey,
  type ApiKeyRow,
} from '../store/repositories/api-keys.ts';
import { sha256Hex } from '../core/hash.ts';
import { QuiverError, ErrorCodes, notFound } from '../core/errors.ts';
import { parseOrThrow } from '../core/validation.ts';

/** What a key may do. `admin` implies every other scope. */
export const API_SCOPES = ['admin', 'read', 'select', 'mcp'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

const KEY_PREFIX = 'qvr_';

/** Who is calling, as established from their key. */
export interface Principal {
  keyId: string;
  name: string;
  scopes: ApiScope[];
  workspaceId: string | null;
  projectId: string | null;
  orgId: string | null;
  userId: string | null;
  roles: string[];
  tier: string | null;
}

/** Input for a new key. */
export const newKeySchema = z.object({
  name: z.string().min(1).max(200),
  scopes: z.array(z.enum(API_SCOPES)).min(1),
  workspaceId: z.string().uuid().nullish(),
  projectId: z.string().uuid().nullish(),
  orgId: z.string().min(1).max(200).nullish(),
  userId: z.string().min(1).max(200).nullish(),
  roles: z.array(z.string().min(1).max(100)).max(50).optional(),
  tier: z.string().min(1).max(100).nullish(),
});

function toPrincipal(row: ApiKeyRow): Principal {
  return {
    keyId: row.id,
    name: row.name,
    scopes: row.scopes.filter((s): s is ApiScope => (API_SCOPES as readonly string[]).includes(s)),
    workspaceId: row.workspaceId,
    projectId: row.projectId,
    orgId: row.orgId,
    userId: row.userId,
    roles: row.roles,
    tier: row.tier,
  };
}

/** True when the principal holds `scope` (admin holds all). */
export function hasScope(principal: Principal, scope: ApiScope): boolean {
  return principal.scopes.includes('admin') || principal.scopes.includes(scope);
}

/** Throws `forbidden` unless the principal holds `scope`. */
export function requireScope(principal: Principal, scope: ApiScope): void {
  if (!hasScope(principal, scope)) {
    throw new QuiverError(ErrorCodes.forbidden, `this API key lacks the '${scope}' scope`);
  }
}

/** The API-key service. */
export interface ApiKeyService {
  /** Creates a key and returns its plaintext (shown once). */
  create(input: z.input<typeof newKeySchema>): Promise<{ key: string; record: ApiKeyRow }>;
  /** Resolves a presented key to a principal, or throws `unauthorized`. */
  authenticate(presented: string | undefined): Promise<Principal>;
  list(): Promise<ApiKeyRow[]>;
  revoke(id: string): Promise<void>;
  /** Creates an admin key when none exists; returns its plaintext, or undefined. */
  ensureAdminKey(): Promise<string | undefined>;
}

/** Creates the API-key service. Verified keys are cached for `cacheTtlMs` (default 30 s). */
export function createApiKeyService(options: { db: Database; cacheTtlMs?: number; now?: () => number }): ApiKeyService {
  const { db } = options;
  const ttl = options.cacheTtlMs ?? 30_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { principal: Principal; expires: number }>();

  async function create(input: z.input<typeof newKeySchema>) {
    const parsed = parseOrThrow(newKeySchema, input, 'API key');
    const secret = randomBytes(32).toString('base64url');
    const key = `${KEY_PREFIX}${secret}`;
    const record = await insertApiKey(db, {
      ...parsed,
      prefix: key.slice(0, 10),
      keyHash: sha256Hex(key),
    });
    return { key, record };
  }

  return {
    create,
    async authenticate(presented) {
      if (!presented) {
        throw new QuiverError(ErrorCodes.unauthorized, 'missing API key: send "Authorization: Bearer <key>"');
      }
      const hash = sha256Hex(presented);
      const cached = cache.get(hash);
      if (cached && cached.expires > now()) return cached.principal;
      const row = await findApiKeyByHash(db, hash);
      // Compare hashes in constant time even though the lookup was by hash, so a partial
      // match never short-circuits differently.
      if (!row || !timingSafeEqual(Buffer.from(hash), Buffer.from(sha256Hex(presented)))) {
        cache.delete(hash);
        throw new QuiverError(ErrorCodes.unauthorized, 'invalid or revoked API key');
      }
      const principal = toPrincipal(row);
      cache.set(hash, { principal, expires: now() + ttl });
      void touchApiKey(db, row.id).catch(() => {});
      return principal;
    },
    list: () => listApiKeys(db),
    async revoke(id) {
      if (!(await revokeApiKey(db, id))) throw notFound('API key', id);
      cache.clear();
    },
    async ensureAdminKey() {
      if ((await countLiveKeysWithScope(db, 'admin')) > 0) return undefined;
      const { key } = await create({ name: 'initial admin key', scopes: ['admin'] });
      return key;
    },
  };
}
