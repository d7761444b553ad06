/**
 * @module verification/signing
 * Signed verification reports (seed 000 §4.2 "produce signed verification report", Appendix B
 * `signature`). The hub has one Ed25519 key pair, generated once by whichever replica needs it
 * first and stored in `hub_signing_keys` with the private key sealed by the secret box, so every
 * replica signs with the same key and anyone holding the public key checks a report offline.
 *
 * The signature is a detached JWS (RFC 7515 appendix F, `alg: EdDSA`): `HEADER..SIGNATURE`,
 * where the signed input is `HEADER.base64url(canonical JSON of the report without its
 * signature field)`. Canonical JSON (core/hash.ts) makes the bytes independent of key order
 * and whitespace, so a report re-serialised by any tool still checks, while any change to a
 * value does not.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../core/hash.ts';
import type { SecretBox } from '../plugins/secret-box.ts';
import type { Queryable } from '../store/database.ts';

/** The key row's name: one hub key (rotation would add rows with other names). */
const KEY_NAME = 'hub';
const SEAL_CONTEXT = 'hub-signing-key/hub';
const JWS_TYPE = 'quiver-verification-report+json';

/** The hub's signing key, ready to use. */
export interface HubSigningKey {
  /** First 16 hex digits of SHA-256 over the DER public key; in every signature's header. */
  keyId: string;
  publicKeyPem: string;
  privateKey: KeyObject;
}

/** Why a report did or did not check. */
export interface SignatureCheck {
  valid: boolean;
  reason: string;
  keyId?: string;
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** Key id of a public key: what a signature's `kid` names. */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

/** The bytes a report's signature covers: its canonical JSON without `signature`. */
export function signedContent(report: Record<string, unknown>): string {
  const { signature: _signature, ...content } = report;
  return canonicalJson(content);
}

/** Signs a report (its `signature` member, if any, is ignored) and returns the detached JWS. */
export function signReport(report: Record<string, unknown>, key: Pick<HubSigningKey, 'keyId' | 'privateKey'>): string {
  const header = base64url(JSON.stringify({ alg: 'EdDSA', kid: key.keyId, typ: JWS_TYPE }));
  const input = `${header}.${base64url(signedContent(report))}`;
  return `${header}..${base64url(sign(null, Buffer.from(input, 'utf8'), key.privateKey))}`;
}

/** Checks a signed report against a PEM public key: never throws, says why it failed. */
export function checkReportSignature(report: unknown, publicKeyPem: string): SignatureCheck {
  if (report === null || typeof report !== 'object' || Array.isArray(report)) return { valid: false, reason: 'the report is not a JSON object' };
  const signature = (report as Record<string, unknown>).signature;
  if (typeof signature !== 'string') return { valid: false, reason: 'the report has no signature' };
  const parts = signature.split('.');
  if (parts.length !== 3 || parts[1] !== '') return { valid: false, reason: 'the signature is not a detached JWS (HEADER..SIGNATURE)' };
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey(publicKeyPem);
  } catch {
    return { valid: false, reason: 'the public key is not a PEM public key' };
  }
  let header: { alg?: unknown; kid?: unknown };
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as typeof header;
  } catch {
    return { valid: false, reason: 'the signature header is not base64url JSON' };
  }
  if (header.alg !== 'EdDSA') return { valid: false, reason: `unsupported signature algorithm ${String(header.alg)}` };
  const keyId = keyIdOf(publicKey);
  if (header.kid !== keyId) return { valid: false, reason: `signed by key ${String(header.kid)}, not by this public key (${keyId})`, keyId };
  const input = `${parts[0]}.${base64url(signedContent(report as Record<string, unknown>))}`;
  const ok = verify(null, Buffer.from(input, 'utf8'), publicKey, Buffer.from(parts[2]!, 'base64url'));
  return ok
    ? { valid: true, reason: `signature valid (key ${keyId})`, keyId }
    : { valid: false, reason: 'signature does not match the report content (the report was altered or signed by another key)', keyId };
}

interface KeyRow {
  public_key: string;
  private_key_sealed: { ciphertext: string; iv: string; authTag: string; keyId: string; algorithm: string };
  key_id: string;
}

/** Reads the hub key, creating it on first use; a concurrent creator's key wins the insert and is used. */
export async function loadHubSigningKey(db: Queryable, secrets: SecretBox): Promise<HubSigningKey> {
  const read = async () => (await db.query<KeyRow>('SELECT public_key, private_key_sealed, key_id FROM hub_signing_keys WHERE name = $1', [KEY_NAME])).rows[0];
  let row = await read();
  if (!row) {
    const pair = generateKeyPairSync('ed25519');
    const publicKeyPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const sealed = secrets.seal(pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), SEAL_CONTEXT);
    await db.query(
      `INSERT INTO hub_signing_keys (name, algorithm, public_key, private_key_sealed, key_id) VALUES ($1, 'ed25519', $2, $3::jsonb, $4)
       ON CONFLICT (name) DO NOTHING`,
      [KEY_NAME, publicKeyPem, JSON.stringify(sealed), keyIdOf(pair.publicKey)],
    );
    row = await read();
    if (!row) throw new Error('the hub signing key could not be stored');
  }
  const privateKey = createPrivateKey(secrets.open(row.private_key_sealed, SEAL_CONTEXT));
  return { keyId: row.key_id, publicKeyPem: row.public_key, privateKey };
}

/** The public half only (for `verify-report public-key` and the API); creates the key when missing. */
export async function hubPublicKey(db: Queryable, secrets: SecretBox): Promise<{ keyId: string; publicKeyPem: string }> {
  const key = await loadHubSigningKey(db, secrets);
  return { keyId: key.keyId, publicKeyPem: key.publicKeyPem };
}
