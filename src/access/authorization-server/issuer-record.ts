/**
 * @module access/authorization-server/issuer-record
 * The origin the built-in authorization server last ran at, kept beside its records, so that
 * `quiver user invite` prints a sign-up link at the running server's address (a server started
 * with `--http 127.0.0.1:7499` is not at the configured default port).
 */
import type { Queryable } from '../../store/database.ts';
import { findProviderRecord, upsertProviderRecord } from '../../store/repositories/auth-provider-records.ts';

const MODEL = 'QuiverIssuer';
const ID = 'current';

export async function rememberIssuer(db: Queryable, issuer: string): Promise<void> {
  await upsertProviderRecord(db, { model: MODEL, id: ID, payload: { issuer }, expiresAt: undefined });
}

/** The issuer last remembered, or undefined. */
export async function lastIssuer(db: Queryable): Promise<string | undefined> {
  const record = await findProviderRecord(db, MODEL, ID, new Date());
  return typeof record?.payload.issuer === 'string' ? record.payload.issuer : undefined;
}
