/**
 * `QUIVER_TRUST_PROXY` (issue #27): X-Forwarded-For / -Proto / -Host are believed only from a
 * named proxy; the client is the rightmost untrusted hop; malformed values fall back.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createProxyTrust } from './trusted-proxy.ts';

const headers = (values: Record<string, string>) => (name: string) => values[name];

describe('trusted proxies', () => {
  it('ignores the headers unless the peer is a named proxy', () => {
    const none = createProxyTrust(undefined);
    assert.equal(none.enabled, false);
    const spoofed = headers({ 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' });
    assert.equal(none.clientAddress('127.0.0.1', spoofed), '127.0.0.1');
    assert.equal(none.origin('127.0.0.1', spoofed, 'http://127.0.0.1:7411'), 'http://127.0.0.1:7411');
    const loopback = createProxyTrust('loopback');
    assert.equal(loopback.clientAddress('198.51.100.4', spoofed), '198.51.100.4', 'a peer that is not a named proxy');
    assert.equal(loopback.origin('198.51.100.4', spoofed, 'http://q.internal:7411'), 'http://q.internal:7411');
    assert.throws(() => createProxyTrust('loopback,everyone'), /QUIVER_TRUST_PROXY: 'everyone' is not loopback/);
  });

  it('behind named proxies: the rightmost untrusted X-Forwarded-For hop, the first proto and host', () => {
    const trust = createProxyTrust('loopback, 10.0.0.0/8');
    assert.equal(trust.clientAddress('::ffff:127.0.0.1', headers({ 'x-forwarded-for': '203.0.113.9' })), '203.0.113.9');
    // The client wrote 1.2.3.4 itself; 203.0.113.9 reached the outer proxy 10.0.0.5, which reached us.
    assert.equal(trust.clientAddress('127.0.0.1', headers({ 'x-forwarded-for': '1.2.3.4, 203.0.113.9, 10.0.0.5' })), '203.0.113.9');
    assert.equal(trust.clientAddress('127.0.0.1', headers({ 'x-forwarded-for': '[2001:db8::7]:5555, 198.51.100.2:443' })), '198.51.100.2');
    assert.equal(trust.clientAddress('127.0.0.1', headers({ 'x-forwarded-for': 'garbage' })), '127.0.0.1', 'nothing usable: the peer');
    assert.equal(trust.clientAddress('127.0.0.1', headers({})), '127.0.0.1');
    assert.equal(trust.origin('127.0.0.1', headers({ 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'Quiver.Example.com' }), 'http://127.0.0.1:7411'), 'https://quiver.example.com');
    assert.equal(trust.origin('127.0.0.1', headers({ 'x-forwarded-proto': 'https' }), 'http://127.0.0.1:7411'), 'https://127.0.0.1:7411');
    assert.equal(trust.origin('127.0.0.1', headers({ 'x-forwarded-proto': 'gopher', 'x-forwarded-host': 'a b/c@d' }), 'http://127.0.0.1:7411'), 'http://127.0.0.1:7411', 'malformed values are ignored');
  });
});
