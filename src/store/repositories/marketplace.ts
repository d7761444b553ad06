/**
 * @module store/repositories/marketplace
 * The marketplace catalog: installable MCP servers in the official MCP Registry `server.json`
 * format, stored whole and upserted by their reverse-DNS name.
 */
import type { Queryable } from '../database.ts';
import { jsonParam, timeParam, toDate } from './mapping.ts';

/** One installable server. */
export interface MarketplaceRecord {
  id: string;
  name: string;
  title: string | null;
  description: string;
  version: string | null;
  /** The whole `server.json` entry as imported. */
  server: Record<string, unknown>;
  source: string | null;
  importedAt: Date;
  updatedAt: Date;
}

/** The fields an import writes. */
export interface MarketplaceFields {
  name: string;
  title: string | null;
  description: string;
  version: string | null;
  server: Record<string, unknown>;
  source: string | null;
}

interface Row {
  id: string;
  name: string;
  title: string | null;
  description: string;
  version: string | null;
  server: Record<string, unknown>;
  source: string | null;
  imported_at: unknown;
  updated_at: unknown;
}

const COLUMNS = 'id, name, title, description, version, server, source, imported_at, updated_at';

const toRecord = (row: Row): MarketplaceRecord => ({
  id: row.id,
  name: row.name,
  title: row.title,
  description: row.description,
  version: row.version,
  server: row.server,
  source: row.source,
  importedAt: toDate(row.imported_at),
  updatedAt: toDate(row.updated_at),
});

/** Upserts entries by name in one statement; returns how many were new. */
export async function upsertMarketplaceServers(db: Queryable, entries: readonly MarketplaceFields[], now: Date): Promise<{ inserted: number; updated: number }> {
  if (entries.length === 0) return { inserted: 0, updated: 0 };
  const { rows } = await db.query<{ inserted: boolean }>(
    `INSERT INTO marketplace_servers (name, title, description, version, server, source, imported_at, updated_at)
     SELECT e.name, e.title, e.description, e.version, e.server, e.source, $2, $2
       FROM jsonb_to_recordset($1::jsonb) AS e(name text, title text, description text, version text, server jsonb, source text)
     ON CONFLICT (name) DO UPDATE SET title = EXCLUDED.title, description = EXCLUDED.description, version = EXCLUDED.version,
       server = EXCLUDED.server, source = EXCLUDED.source, updated_at = EXCLUDED.updated_at
     RETURNING (xmax = 0) AS inserted`,
    [jsonParam(entries), timeParam(now)],
  );
  const inserted = rows.filter((row) => row.inserted).length;
  return { inserted, updated: rows.length - inserted };
}

/** Every entry, by name. */
export async function listMarketplaceServers(db: Queryable): Promise<MarketplaceRecord[]> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM marketplace_servers ORDER BY name`);
  return rows.map(toRecord);
}

/** One entry by its registry name. */
export async function findMarketplaceServer(db: Queryable, name: string): Promise<MarketplaceRecord | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM marketplace_servers WHERE name = $1`, [name]);
  return rows[0] === undefined ? undefined : toRecord(rows[0]);
}
