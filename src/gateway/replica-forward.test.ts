import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { checkForward, forwardingKey, signForward } from './replica-forward.ts';

describe('signed forwarding between replicas (issue #24)', () => {
  const key = forwardingKey(randomBytes(32));
  const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call"}';
  const now = 1_700_000_000_000;

  it('accepts a recent signature over the same body from a replica holding the key', () => {
    assert.equal(checkForward(key, signForward(key, 'r-a', now, body), body, now + 1_000), 'valid');
    assert.equal(checkForward(key, null, body, now), 'none');
  });

  it('refuses another body, another key, an old or future signature, and garbage', () => {
    const header = signForward(key, 'r-a', now, body);
    assert.equal(checkForward(key, header, `${body} `, now), 'invalid');
    assert.equal(checkForward(forwardingKey(randomBytes(32)), header, body, now), 'invalid');
    assert.equal(checkForward(key, header, body, now + 61_000), 'invalid');
    assert.equal(checkForward(key, header, body, now - 61_000), 'invalid');
    assert.equal(checkForward(key, header.replace('r-a', 'r-b'), body, now), 'invalid');
    assert.equal(checkForward(key, 'v1.x.1.short', body, now), 'invalid');
  });

  it('derives the key from the secret: the same on every replica, never the secret itself', () => {
    const secret = randomBytes(32);
    assert.deepEqual(forwardingKey(secret), forwardingKey(secret));
    assert.notDeepEqual(Buffer.from(forwardingKey(secret)), secret);
  });
});
