import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openState, requestStateKey, requestTarget, sealState } from './request-state.ts';

describe('sealed requestState (issue #24)', () => {
  const key = requestStateKey(randomBytes(32));
  const binding = { principal: 'principal-a', target: requestTarget('tools/call', { name: 'call_tool', arguments: { name: 'p__t', arguments: {} } }) };
  const now = 1_000_000;
  const sealed = sealState(key, { call: 'call-1', round: 2 }, binding, now + 60_000);

  it('opens for the principal and request it was sealed for, and shows no identity', () => {
    assert.deepEqual(openState(key, sealed, binding, now), { call: 'call-1', round: 2 });
    assert.ok(!sealed.includes('principal-a') && !Buffer.from(sealed.split('.')[1]!, 'base64url').toString().includes('principal'));
  });

  it('is refused when altered, for another principal, another request or arguments, another key, or once expired', () => {
    const payload = Buffer.from(JSON.stringify({ c: 'call-2', r: 2, e: now + 60_000 })).toString('base64url');
    assert.deepEqual(openState(key, `q1.${payload}.${sealed.split('.')[2]}`, binding, now), { refused: 'mac' });
    assert.deepEqual(openState(key, `${sealed}-TAMPERED`, binding, now), { refused: 'mac' });
    assert.deepEqual(openState(key, sealed, { ...binding, principal: 'principal-b' }, now), { refused: 'mac' });
    assert.deepEqual(openState(key, sealed, { ...binding, target: requestTarget('tools/call', { name: 'call_tool', arguments: { name: 'p__other', arguments: {} } }) }, now), { refused: 'mac' });
    assert.deepEqual(openState(key, sealed, { ...binding, target: requestTarget('prompts/get', { name: 'call_tool', arguments: { name: 'p__t', arguments: {} } }) }, now), { refused: 'mac' });
    assert.deepEqual(openState(requestStateKey(randomBytes(32)), sealed, binding, now), { refused: 'mac' });
    assert.deepEqual(openState(key, sealed, binding, now + 60_000), { refused: 'expired' });
    assert.deepEqual(openState(key, 'not a state', binding, now), { refused: 'malformed' });
  });

  it('carries the route of the replica holding the call inside the seal', () => {
    const routed = sealState(key, { call: 'call-1', round: 2, replica: 'r-a' }, binding, now + 60_000);
    assert.deepEqual(openState(key, routed, binding, now), { call: 'call-1', round: 2, replica: 'r-a' });
    const moved = Buffer.from(JSON.stringify({ c: 'call-1', r: 2, e: now + 60_000, o: 'r-b' })).toString('base64url');
    assert.deepEqual(openState(key, `q1.${moved}.${routed.split('.')[2]}`, binding, now), { refused: 'mac' }, 'the route cannot be changed');
  });

  it('derives the same key from the same secret (replicas agree) and a different one from another', () => {
    const secret = randomBytes(32);
    assert.deepEqual(requestStateKey(secret), requestStateKey(secret));
    assert.notDeepEqual(requestStateKey(secret), requestStateKey(randomBytes(32)));
    assert.notDeepEqual(Buffer.from(requestStateKey(secret)), secret, 'the secret key itself never signs');
  });
});
