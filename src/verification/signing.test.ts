/** Report signatures: Ed25519 detached JWS over canonical JSON; the hub key stored once, sealed. */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describeEachBackend } from '../../test/helpers/backends.ts';
import { createSecretBox } from '../plugins/secret-box.ts';
import type { Database } from '../store/database.ts';
import { checkReportSignature, keyIdOf, loadHubSigningKey, signReport } from './signing.ts';

function keyPair() {
  const pair = generateKeyPairSync('ed25519');
  return { keyId: keyIdOf(pair.publicKey), privateKey: pair.privateKey, publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

it('a signed report checks; any changed value, a foreign key or a broken signature does not', () => {
  const key = keyPair();
  const report = { jobId: 'ver-1', pluginId: 'calc', overallScore: 87, stages: { schemaValidation: { score: 100, issues: [] } } };
  const signed = { ...report, signature: signReport(report, key) };
  assert.equal(checkReportSignature(signed, key.publicKeyPem).valid, true);
  // Key order and whitespace do not matter (canonical JSON)…
  const reordered = JSON.parse(JSON.stringify({ stages: signed.stages, signature: signed.signature, overallScore: 87, pluginId: 'calc', jobId: 'ver-1' }, null, 2));
  assert.equal(checkReportSignature(reordered, key.publicKeyPem).valid, true);
  // …values do.
  const altered = checkReportSignature({ ...signed, overallScore: 88 }, key.publicKeyPem);
  assert.equal(altered.valid, false);
  assert.match(altered.reason, /does not match/);
  assert.equal(checkReportSignature({ ...signed, extra: true }, key.publicKeyPem).valid, false);
  assert.match(checkReportSignature(signed, keyPair().publicKeyPem).reason, /signed by key/);
  const [header, , sig] = signed.signature.split('.');
  const flipped = `${header}..${sig!.startsWith('A') ? 'B' : 'A'}${sig!.slice(1)}`;
  assert.equal(checkReportSignature({ ...signed, signature: flipped }, key.publicKeyPem).valid, false);
  assert.match(checkReportSignature(report, key.publicKeyPem).reason, /no signature/);
  assert.match(checkReportSignature(signed, 'not a key').reason, /PEM/);
});

it('the signature is a detached JWS naming EdDSA and the key id', () => {
  const key = keyPair();
  const signature = signReport({ a: 1 }, key);
  const [header, payload] = signature.split('.');
  assert.equal(payload, '');
  assert.deepEqual(JSON.parse(Buffer.from(header!, 'base64url').toString()), { alg: 'EdDSA', kid: key.keyId, typ: 'quiver-verification-report+json' });
});

describeEachBackend('hub signing key', (backend) => {
  let db: Database;
  before(async () => {
    db = await backend.open();
  });
  after(() => db.close());

  it('is created once, stored sealed, and the same for every replica; reports it signs check with its public key', async () => {
    const secrets = createSecretBox(randomBytes(32));
    const [first, second] = await Promise.all([loadHubSigningKey(db, secrets), loadHubSigningKey(db, secrets)]);
    assert.equal(first.keyId, second.keyId);
    assert.equal(first.publicKeyPem, second.publicKeyPem);
    const rows = await db.query<{ private_key_sealed: Record<string, string> }>('SELECT private_key_sealed FROM hub_signing_keys');
    assert.equal(rows.rows.length, 1);
    assert.doesNotMatch(JSON.stringify(rows.rows[0]), /PRIVATE KEY/, 'the private key is never stored in plain');
    const report = { jobId: 'x', overallScore: 1 };
    assert.equal(checkReportSignature({ ...report, signature: signReport(report, second) }, first.publicKeyPem).valid, true);
    await assert.rejects(loadHubSigningKey(db, createSecretBox(randomBytes(32))), /another key/, 'another secret key cannot open it');
  });
});
