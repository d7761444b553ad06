/**
 * @module access/api-keys
 * API keys with scopes, bound optionally to a workspace, project, organisation, user, roles
 * and tier. A key is shown once at creation; only its SHA-256 is stored. There is no
 * default key: the first `quiver serve` creates an admin key and prints it once.
 *
 * Verified keys are cached, but a revocation must reach every replica at once (issue #18):
 * the revoking transaction sends a notification on `quiver_api_keys_changed` (delivered at
 * commit), and every service drops the revoked key from its cache when it arrives. The cache
 * is used only while that subscription is live, so a process that cannot listen (or has not
 * yet) asks the database on every request instead of trusting a stale entry (fail closed).
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
import { silentLogger, type Logger } from '../core/logger.ts';
import { API_SCOPES, type ApiScope, type Principal } from './scopes.ts';

// The scopes and the principal live in scopes.ts (no schemas); this module's users keep importing them here.
export { API_SCOPES, hasScope, requireScope, type ApiScope, type Principal } from './scopes.ts';

/** The LISTEN / NOTIFY channel that announces key revocations to every replica. */
export const API_KEYS_CHANGED_CHANNEL = 'quiver_api_keys_changed';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const keyChangeSchema = z.object({ keyId: z.string().min(1) });

/** The key id a notification names, or undefined when it is unreadable (then drop everything). */
export function parseKeyChange(payload: string): string | undefined {
  try {
    const parsed = keyChangeSchema.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data.keyId : undefined;
  } catch {
    return undefined;
  }
}

const KEY_PREFIX = 'qvr_';

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

/** The API-key service. */
export interface ApiKeyService {
  /** Creates a key and returns its plaintext (shown once). */
  create(input: z.input<typeof newKeySchema>): Promise<{ key: string; record: ApiKeyRow }>;
  /** Resolves a presented key to a principal, or throws `unauthorized`. */
  authenticate(presented: string | undefined): Promise<Principal>;
  list(): Promise<ApiKeyRow[]>;
  /** Revokes a key here and, through NOTIFY, in every replica's cache. */
  revoke(id: string): Promise<void>;
  /** Creates an admin key when none exists; returns its plaintext, or undefined. */
  ensureAdminKey(): Promise<string | undefined>;
  /** Resolves once revocations from other processes are being received (the cache is on). */
  ready(): Promise<void>;
  /** Stops listening for revocations. Safe to call twice. */
  close(): Promise<void>;
}

/** Options of `createApiKeyService`. */
export interface ApiKeyServiceOptions {
  db: Database;
  /** How long a verified key is reused without asking the database (default 30 s). */
  cacheTtlMs?: number;
  now?: () => number;
  logger?: Logger;
}

/** Creates the API-key service. Verified keys are cached for `cacheTtlMs` while revocations can be heard. */
export function createApiKeyService(options: ApiKeyServiceOptions): ApiKeyService {
  const { db } = options;
  const ttl = options.cacheTtlMs ?? 30_000;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const cache = new Map<string, { principal: Principal; expires: number }>();
  let listening = false;
  let closed = false;

  function forget(keyId: string | undefined): void {
    if (keyId === undefined) {
      cache.clear();
      return;
    }
    for (const [hash, entry] of cache) if (entry.principal.keyId === keyId) cache.delete(hash);
  }

  const subscription = db
    .listen(API_KEYS_CHANGED_CHANNEL, (payload) => forget(parseKeyChange(payload)))
    .then((unlisten) => {
      if (closed) {
        void unlisten().catch(() => {});
        return undefined;
      }
      listening = true;
      return unlisten;
    })
    .catch((error: unknown) => {
      logger.warn({ err: error }, 'api keys: cannot listen for revocations; every request checks the database');
      return undefined;
    });

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
      const cached = listening ? cache.get(hash) : undefined;
      if (cached && cached.expires > now()) return cached.principal;
      const row = await findApiKeyByHash(db, hash);
      // Compare hashes in constant time even though the lookup was by hash, so a partial
      // match never short-circuits differently.
      if (!row || !timingSafeEqual(Buffer.from(hash), Buffer.from(sha256Hex(presented)))) {
        cache.delete(hash);
        throw new QuiverError(ErrorCodes.unauthorized, 'invalid or revoked API key');
      }
      const principal = toPrincipal(row);
      if (listening) cache.set(hash, { principal, expires: now() + ttl });
      void touchApiKey(db, row.id).catch(() => {});
      return principal;
    },
    list: () => listApiKeys(db),
    async revoke(id) {
      // Not a key id at all: the same answer as an unknown one (and no query the database would refuse).
      if (!UUID_PATTERN.test(id)) throw notFound('API key', id);
      const revoked = await db.transaction(async (tx) => {
        if (!(await revokeApiKey(tx, id))) return false;
        // Delivered when the transaction commits, so no replica hears of a revocation that did not happen.
        await tx.query('SELECT pg_notify($1, $2)', [API_KEYS_CHANGED_CHANNEL, JSON.stringify({ keyId: id })]);
        return true;
      });
      if (!revoked) throw notFound('API key', id);
      forget(id);
    },
    async ensureAdminKey() {
      if ((await countLiveKeysWithScope(db, 'admin')) > 0) return undefined;
      const { key } = await create({ name: 'initial admin key', scopes: ['admin'] });
      return key;
    },
    async ready() {
      await subscription;
    },
    async close() {
      if (closed) return;
      closed = true;
      listening = false;
      cache.clear();
      const unlisten = await subscription;
      await unlisten?.().catch(() => {});
    },
  };
}
