/**
 * @module store/repositories/auth-signing-keys
 * The built-in authorization server's signing keys (issue #27): the public JWK in the clear,
 * the private JWK sealed (AES-256-GCM by the caller; this layer only moves sealed values).
 */
import type { Queryable } from '../database.ts';
import type { SealedSecret } from './secrets.ts';
import { jsonParam, timeParam } from './mapping.ts';

/** A stored signing key. */
export interface SigningKeyRow {
  kid: string;
  publicJwk: Record<string, unknown>;
  sealed: SealedSecret;
}

interface Raw {
  kid: string;
  public_jwk: Record<string, unknown>;
  ciphertext: string;
  iv: string;
  auth_tag: string;
  key_id: string;
  algorithm: string;
}

export async function listSigningKeys(db: Queryable): Promise<SigningKeyRow[]> {
  const { rows } = await db.query<Raw>('SELECT kid, public_jwk, ciphertext, iv, auth_tag, key_id, algorithm FROM auth_signing_keys ORDER BY created_at, kid');
  return rows.map((raw) => ({
    kid: raw.kid,
    publicJwk: raw.public_jwk,
    sealed: { ciphertext: raw.ciphertext, iv: raw.iv, authTag: raw.auth_tag, keyId: raw.key_id, algorithm: raw.algorithm },
  }));
}

/** Stores a key unless one exists already (two processes starting at once keep the first). */
export async function insertFirstSigningKey(db: Queryable, key: SigningKeyRow, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO auth_signing_keys (kid, public_jwk, ciphertext, iv, auth_tag, key_id, algorithm, created_at)
     SELECT $1, $2::jsonb, $3, $4, $5, $6, $7, $8 WHERE NOT EXISTS (SELECT 1 FROM auth_signing_keys)`,
    [key.kid, jsonParam(key.publicJwk), key.sealed.ciphertext, key.sealed.iv, key.sealed.authTag, key.sealed.keyId, key.sealed.algorithm, timeParam(now)],
  );
}
