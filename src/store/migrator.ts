/**
 * @module store/migrator
 * Forward-only SQL migrations, identical on PGlite and PostgreSQL. Files in `migrations/`
 * run in name order, all pending ones in a single transaction under an advisory lock, so
 * several replicas starting at once apply each migration exactly once and a failure leaves
 * the schema as it was. An applied file whose text changed is refused: history is immutable.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from './database.ts';
import { QuiverError } from '../core/errors.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const ADVISORY_LOCK_KEY = 0x51_56_52; // "QVR"

/** One migration file. */
export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** What happened to each migration in one run. */
export interface MigrationResult {
  name: string;
  status: 'applied' | 'already-applied';
}

/** Loads the bundled migrations in order. */
export function loadMigrations(directory: URL = MIGRATIONS_DIR): Migration[] {
  return readdirSync(directory)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const sql = readFileSync(new URL(file, directory), 'utf8');
      return { name: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Applies every pending migration; returns one result per known migration. */
export async function migrate(db: Database, migrations: Migration[] = loadMigrations()): Promise<MigrationResult[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY,
    checksum char(64) NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCK_KEY]);
    const { rows } = await tx.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_migrations');
    const applied = new Map(rows.map((row) => [row.name, row.checksum]));
    const known = new Set(migrations.map((m) => m.name));
    const unknown = [...applied.keys()].filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new QuiverError(
        'schema_too_new',
        `the database has migrations this Quiver does not know (${unknown.join(', ')}); upgrade Quiver instead of downgrading`,
        { kind: 'user' },
      );
    }
    const results: MigrationResult[] = [];
    for (const migration of migrations) {
      const previous = applied.get(migration.name);
      if (previous !== undefined) {
        if (previous !== migration.checksum) {
          throw new QuiverError('migration_changed', `migration ${migration.name} was edited after it was applied`, {
            kind: 'unexpected',
          });
        }
        results.push({ name: migration.name, status: 'already-applied' });
        continue;
      }
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [migration.name, migration.checksum]);
      results.push({ name: migration.name, status: 'applied' });
    }
    return results;
  });
}

/**
 * Splits a migration into statements at top-level semicolons (outside quotes, comments
 * and dollar-quoted bodies), because parameterised `query` runs one statement at a time
 * inside a transaction on both engines.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let i = 0;
  while (i < sql.length) {
    const char = sql[i]!;
    const next = sql[i + 1];
    if (char === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
      current += '\n';
      continue;
    }
    if (char === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
      continue;
    }
    if (char === "'" || char === '"') {
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === char) {
          if (sql[j + 1] === char) j += 2;
          else break;
        } else j++;
      }
      current += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (char === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        const stop = end === -1 ? sql.length : end + tag[0].length;
        current += sql.slice(i, stop);
        i = stop;
        continue;
      }
    }
    if (char === ';') {
      if (current.trim()) statements.push(current.trim());
      current = '';
      i++;
      continue;
    }
    current += char;
    i++;
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}
