/**
 * @module access/authorization-server/signing-keys
 * The built-in authorization server's token-signing key: an ES256 key pair generated once, on
 * the first start, and kept in the database (so every restart and every process on the same
 * store signs and verifies with the same key): the public JWK in the clear, the private JWK
 * sealed with the hub's secret key (AES-256-GCM, bound to the key id), like plugin secrets.
 */
import type { JWK } from 'jose';
import type { Database } from '../../store/database.ts';
import type { SealedSecret } from '../../store/repositories/secrets.ts';
import { insertFirstSigningKey, listSigningKeys } from '../../store/repositories/auth-signing-keys.ts';

/** Seals and opens values with the hub's secret key (the plugins' SecretBox fits). */
export interface Sealer {
  seal(plaintext: string, context: string): SealedSecret;
  open(sealed: SealedSecret, context: string): string;
}

/** The keys: the private ones for the provider, the public ones for verifiers. */
export interface SigningKeys {
  privateKeys: JWK[];
  publicKeys: JWK[];
}

const contextOf = (kid: string) => `authorization-server/signing-key/${kid}`;

/** Loads the stored keys, generating and storing the first one when there is none. */
export async function loadSigningKeys(db: Database, sealer: Sealer, now: () => Date = () => new Date()): Promise<SigningKeys> {
  let rows = await listSigningKeys(db);
  if (rows.length === 0) {
    // jose loads only to make the first key (issue #28: idle memory).
    const { calculateJwkThumbprint, exportJWK, generateKeyPair } = await import('jose');
    const pair = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(pair.publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = { ...(await exportJWK(pair.privateKey)), kid, alg: 'ES256', use: 'sig' };
    await insertFirstSigningKey(db, { kid, publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' }, sealed: sealer.seal(JSON.stringify(privateJwk), contextOf(kid)) }, now());
    rows = await listSigningKeys(db);
  }
  return {
    privateKeys: rows.map((row) => JSON.parse(sealer.open(row.sealed, contextOf(row.kid))) as JWK),
    publicKeys: rows.map((row) => row.publicJwk as JWK),
  };
}
