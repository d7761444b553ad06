/**
 * The install's credential step alone: declarations from quiver.json and the extra ones (first
 * of a name wins), values split into env and headers, required ones named when missing, and a
 * failure message that never carries a credential value.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../../core/errors.ts';
import { credentialDelivery, declaredCredentials, installDelivery } from './credentials.ts';
import { installFailure } from './failure.ts';

describe('install credentials', () => {
  const header = { name: 'AUTHORIZATION', required: true, as: 'header' as const, header: 'Authorization' };

  it('takes quiver.json declarations first, then extra ones of other names; malformed ones are ignored', () => {
    const fromFile = { credentials: [{ name: 'API_TOKEN', required: true }, { name: 'AUTHORIZATION', required: false }] };
    const declared = declaredCredentials(fromFile, [header, { name: 'REGION', required: false, as: 'env' }]);
    assert.deepEqual(declared.map((credential) => [credential.name, credential.required]), [['API_TOKEN', true], ['AUTHORIZATION', false], ['REGION', false]]);
    assert.deepEqual(declaredCredentials({ credentials: 'not a list' }, [header]).map((credential) => credential.name), ['AUTHORIZATION']);
    assert.deepEqual(declaredCredentials(undefined, []), []);
  });

  it('delivers header credentials as headers and everything else as env, naming required ones not set', () => {
    const delivery = credentialDelivery([header, { name: 'API_TOKEN', required: true, as: 'env' }], { AUTHORIZATION: 'Bearer x', EXTRA: 'y' });
    assert.deepEqual(delivery, { env: { EXTRA: 'y' }, headers: { Authorization: 'Bearer x' }, missing: ['API_TOKEN'] });
  });

  it('fails an install at the launch step naming the missing keys, with the given values redacted', () => {
    const secret = 'super-secret-value-123';
    const { fail } = installFailure('weather', [secret]);
    assert.throws(
      () => installDelivery('weather', [{ name: 'API_TOKEN', required: true, as: 'env' }], { OTHER: secret }, fail),
      (error: unknown) =>
        isQuiverError(error, 'install_failed') &&
        (error.details as { step: string }).step === 'launch' &&
        /missing required credential 'API_TOKEN'.*--secret API_TOKEN=/.test(error.message),
    );
    const failed = fail('discovery', `the server said ${secret}`, { errors: [`bad ${secret}`] });
    assert.doesNotMatch(JSON.stringify({ message: failed.message, details: failed.details }), new RegExp(secret));
    assert.match(failed.message, /^cannot install plugin 'weather': discovery failed: the server said /);
    assert.equal(installDelivery('weather', [{ name: 'API_TOKEN', required: true, as: 'env' }], { API_TOKEN: 'v' }, fail).env['API_TOKEN'], 'v');
  });
});
