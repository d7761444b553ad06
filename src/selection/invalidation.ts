/**
 * @module selection/invalidation
 * Cross-process cache invalidation (DESIGN §3.4): writers announce a change on one
 * PostgreSQL channel with `pg_notify`; every selection engine listening on the same database
 * (several gateway replicas, or one PGlite process) drops the matching cache entries.
 */
import { z } from 'zod';
import type { Database } from '../store/database.ts';

/** The LISTEN / NOTIFY channel. */
export const CATALOG_CHANGED_CHANNEL = 'quiver_catalog_changed';

/** What changed; `all` drops every cache. */
export const CACHE_KINDS = ['tools', 'categories', 'mappings', 'rules', 'enablement', 'bandit', 'all'] as const;
/** A kind of change the selection caches react to. */
export type CacheKind = (typeof CACHE_KINDS)[number];

const payloadSchema = z.object({ kind: z.enum(CACHE_KINDS) });

/** Announces a change to every listening engine (this process included). Call after the write committed. */
export async function notifyCatalogChanged(db: Database, kind: CacheKind): Promise<void> {
  await db.notify(CATALOG_CHANGED_CHANNEL, JSON.stringify({ kind }));
}

/** Reads a notification payload; an unreadable one means "anything may have changed" (`all`). */
export function parseCatalogChange(payload: string): CacheKind {
  try {
    const parsed = payloadSchema.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data.kind : 'all';
  } catch {
    return 'all';
  }
}
