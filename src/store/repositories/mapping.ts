/**
 * @module store/repositories/mapping
 * Small helpers every repository shares at the snake_case ↔ camelCase boundary: parameter
 * encoding (jsonb as text, timestamps as ISO text), row decoding, and recognising the
 * constraint errors a service turns into `conflict` / `not_found` (docs/engineering.md, SQL).
 */

/** The nil UUID the schema's unique indexes use for "no plugin" (`COALESCE(plugin_id, …)`). */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is UUID text; callers check before querying so bad ids read as "not found", not as SQL errors. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** Encodes a value for a `$n::jsonb` parameter (node-postgres would turn arrays into Postgres arrays). */
export function jsonParam(value: unknown): string {
  return JSON.stringify(value);
}

/** Encodes a Date for a `$n::timestamptz` parameter, identically on both engines. */
export function timeParam(value: Date): string {
  return value.toISOString();
}

/** Decodes a timestamptz column (a Date on both engines; text is accepted defensively). */
export function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** Decodes a nullable timestamptz column. */
export function toDateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : toDate(value);
}

/** Escapes `%`, `_` and `\` so user text is matched literally by ILIKE. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** True for a unique-constraint violation (SQLSTATE 23505) from either engine. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505';
}

/** True for a foreign-key violation (SQLSTATE 23503) from either engine. */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlState(error) === '23503';
}
