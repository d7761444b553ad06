/**
 * @module plugins/secret-box
 * Plugin credentials at rest (DESIGN §3.5: "stored encrypted … never logged"). AES-256-GCM
 * with a random 12-byte IV per value and the 16-byte auth tag; the plugin id and key name are
 * bound as additional data, so a sealed value copied onto another plugin or key fails to
 * open. The key id (a short SHA-256 of the key) is stored with each value, so a value sealed
 * under another key is recognised instead of failing as "corrupt".
 *
 * The key comes from `QUIVER_SECRET_KEY` / `QUIVER_SECRET_KEY_FILE` (32 bytes, base64 or hex),
 * else from `<home>/secret.key`, created on first use with mode 0600. A key file readable by
 * group or others is refused: a leaked key opens every credential (STYLE: no default secrets).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import type { SealedSecret } from '../store/repositories/secrets.ts';

/** The algorithm of every sealed value. */
export const SECRET_ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;

/** Seals and opens secret values. */
export interface SecretBox {
  /** Identifies the key (first 16 hex digits of its SHA-256); stored with each value. */
  readonly keyId: string;
  /** Encrypts `plaintext`, bound to `context` (e.g. `<pluginId>/<key>`). */
  seal(plaintext: string, context: string): SealedSecret;
  /** Decrypts a sealed value; throws when the key, the context or the bytes do not match. */
  open(sealed: SealedSecret, context: string): string;
}

/** Parses a 32-byte key written as base64 (44 chars) or hex (64 chars). */
export function parseSecretKey(text: string, origin: string): Buffer {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(trimmed)) key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key === undefined || key.length !== KEY_BYTES) {
    throw new QuiverError(
      ErrorCodes.config,
      `${origin} must be 32 random bytes written as base64 (44 characters) or hex (64 characters); generate one with: openssl rand -base64 32`,
    );
  }
  return key;
}

/** Where the key came from, for `quiver doctor`-style reports (never the key itself). */
export interface LoadedSecretKey {
  key: Buffer;
  origin: 'config' | 'key-file' | 'generated-key-file';
  path?: string;
}

/**
 * Loads the secret key: `configured` (QUIVER_SECRET_KEY) when given, else `<homeDir>/secret.key`,
 * generated with mode 0600 when missing. Refuses a key file readable by group or others.
 */
export function loadSecretKey(options: { configured?: string | undefined; homeDir: string }): LoadedSecretKey {
  if (options.configured !== undefined && options.configured !== '') {
    return { key: parseSecretKey(options.configured, 'QUIVER_SECRET_KEY'), origin: 'config' };
  }
  const path = join(options.homeDir, 'secret.key');
  let created = false;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // 'wx' fails when the file exists: two processes starting at once never overwrite each other's key.
    const fd = openSync(path, 'wx', 0o600);
    try {
      writeSync(fd, `${randomBytes(KEY_BYTES).toString('base64')}\n`);
    } finally {
      closeSync(fd);
    }
    created = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new QuiverError(ErrorCodes.config, `cannot create the secret key file ${path}: ${(error as Error).message}`, { cause: error });
    }
  }
  const stat = statSync(path);
  if ((stat.mode & 0o077) !== 0) {
    throw new QuiverError(
      ErrorCodes.config,
      `the secret key file ${path} is readable by group or others (mode ${(stat.mode & 0o777).toString(8)}); run: chmod 600 ${path}`,
    );
  }
  const key = parseSecretKey(readFileSync(path, 'utf8'), `the secret key file ${path}`);
  return { key, origin: created ? 'generated-key-file' : 'key-file', path };
}

/** Creates a SecretBox over a 32-byte key. */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== KEY_BYTES) throw new QuiverError(ErrorCodes.config, 'the secret key must be 32 bytes');
  const keyBytes = Buffer.from(key);
  const keyId = createHash('sha256').update(keyBytes).digest('hex').slice(0, 16);
  return {
    keyId,
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(SECRET_ALGORITHM, keyBytes, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return {
        ciphertext: ciphertext.toString('base64'),
        iv: iv.toString('base64'),
        authTag: cipher.getAuthTag().toString('base64'),
        keyId,
        algorithm: SECRET_ALGORITHM,
      };
    },
    open(sealed, context) {
      if (sealed.algorithm !== SECRET_ALGORITHM) {
        throw new QuiverError('secret_unreadable', `a stored secret uses unknown algorithm '${sealed.algorithm}'`, { kind: 'unexpected' });
      }
      if (sealed.keyId !== keyId) {
        throw new QuiverError(
          'secret_unreadable',
          `a stored secret was sealed with another key (key id ${sealed.keyId}, current ${keyId}); restore that key or set the secret again`,
          { kind: 'user' },
        );
      }
      try {
        const decipher = createDecipheriv(SECRET_ALGORITHM, keyBytes, Buffer.from(sealed.iv, 'base64'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(sealed.authTag, 'base64'));
        return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
      } catch {
        // Never include the bytes or the cause's text: it could echo what was being decrypted.
        throw new QuiverError('secret_unreadable', 'a stored secret failed its integrity check (tampered, or bound to another plugin or key)', {
          kind: 'unexpected',
        });
      }
    },
  };
}

/**
 * A secret box whose key is loaded on first use, so commands that never touch secrets do
 * not create a key file (and a missing key is reported only where it matters).
 */
export function createLazySecretBox(loadKey: () => Buffer): SecretBox {
  let box: SecretBox | undefined;
  const get = () => (box ??= createSecretBox(loadKey()));
  return {
    get keyId() {
      return get().keyId;
    },
    seal: (plaintext, context) => get().seal(plaintext, context),
    open: (sealed, context) => get().open(sealed, context),
  };
}
