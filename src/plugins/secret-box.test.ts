import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isQuiverError } from '../core/errors.ts';
import { createSecretBox, loadSecretKey, parseSecretKey } from './secret-box.ts';

describe('secret box', () => {
  it('seals with a fresh IV each time and opens only in the same context with the same key', () => {
    const box = createSecretBox(randomBytes(32));
    const a = box.seal('s3cr3t value', 'plugin-1/TOKEN');
    const b = box.seal('s3cr3t value', 'plugin-1/TOKEN');
    assert.notEqual(a.iv, b.iv);
    assert.notEqual(a.ciphertext, b.ciphertext);
    assert.equal(box.open(a, 'plugin-1/TOKEN'), 's3cr3t value');
    assert.throws(() => box.open(a, 'plugin-2/TOKEN'), (error: Error) => isQuiverError(error, 'secret_unreadable'));
    const flipped = Buffer.from(a.ciphertext, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    assert.throws(() => box.open({ ...a, ciphertext: flipped.toString('base64') }, 'plugin-1/TOKEN'), (error: Error) => isQuiverError(error, 'secret_unreadable'));
    const other = createSecretBox(randomBytes(32));
    assert.throws(() => other.open(a, 'plugin-1/TOKEN'), /sealed with another key/);
  });

  it('parses 32-byte keys in hex or base64 and rejects anything else', () => {
    const key = randomBytes(32);
    assert.deepEqual(parseSecretKey(key.toString('hex'), 'K'), key);
    assert.deepEqual(parseSecretKey(key.toString('base64'), 'K'), key);
    assert.deepEqual(parseSecretKey(key.toString('base64url'), 'K'), key);
    for (const bad of ['short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), 'x'.repeat(64)]) {
      assert.throws(() => parseSecretKey(bad, 'QUIVER_SECRET_KEY'), (error: Error) => isQuiverError(error, 'invalid_config') && /QUIVER_SECRET_KEY/.test(error.message));
    }
  });

  it('creates the key file once with mode 0600 and refuses one readable by others', () => {
    const home = mkdtempSync(join(tmpdir(), 'quiver-key-'));
    try {
      const first = loadSecretKey({ homeDir: home });
      assert.equal(first.origin, 'generated-key-file');
      assert.equal(statSync(join(home, 'secret.key')).mode & 0o777, 0o600);
      const second = loadSecretKey({ homeDir: home });
      assert.equal(second.origin, 'key-file');
      assert.deepEqual(second.key, first.key);
      assert.equal(readFileSync(join(home, 'secret.key'), 'utf8').trim(), first.key.toString('base64'));
      chmodSync(join(home, 'secret.key'), 0o644);
      assert.throws(() => loadSecretKey({ homeDir: home }), /readable by group or others.*chmod 600/);
      const configured = randomBytes(32);
      assert.deepEqual(loadSecretKey({ homeDir: home, configured: configured.toString('hex') }), { key: configured, origin: 'config' });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
