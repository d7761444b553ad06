/**
 * The built-in authorization server's small parts (issue #27; the sign-in throttle is in
 * throttle.test.ts, on both databases): password hashes (scrypt, constant-time check,
 * malformed hashes never match), CSRF tokens bound to purpose and flow, and page escaping.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hashPassword, verifyPassword } from './password.ts';
import { createCsrfTokens } from './csrf.ts';
import { consentPage, escapeHtml } from './pages.ts';

describe('built-in authorization server parts', () => {
  it('passwords: scrypt hashes that verify, differ per salt, and a malformed hash never matches', async () => {
    const hash = await hashPassword('correct horse battery staple');
    assert.match(hash, /^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.notEqual(hash, await hashPassword('correct horse battery staple'));
    assert.equal(await verifyPassword('correct horse battery staple', hash), true);
    assert.equal(await verifyPassword('correct horse battery stapl', hash), false);
    assert.equal(await verifyPassword('x', 'scrypt$30$8$1$aa$bb'), false, 'a cost outside the bounds is refused, not computed');
    assert.equal(await verifyPassword('x', 'plain'), false);
  });

  it('CSRF tokens are bound to purpose and flow, and need the key', () => {
    const tokens = createCsrfTokens(randomBytes(32));
    const token = tokens.issue('interaction', 'uid-1');
    assert.equal(tokens.verify('interaction', 'uid-1', token), true);
    assert.equal(tokens.verify('interaction', 'uid-2', token), false);
    assert.equal(tokens.verify('signup', 'uid-1', token), false);
    assert.equal(tokens.verify('interaction', 'uid-1', undefined), false);
    assert.equal(createCsrfTokens(randomBytes(32)).verify('interaction', 'uid-1', token), false);
  });

  it('pages escape what clients registered', () => {
    assert.equal(escapeHtml(`<script>"'&`), '&#60;script&#62;&#34;&#39;&#38;');
    const page = consentPage({ action: '/a', abortAction: '/b', csrf: 'c', clientName: '<img src=x onerror=alert(1)>', clientId: 'id"><b>', email: 'a@b', orgId: 'acme', scopes: ['mcp'], resources: ['http://127.0.0.1/mcp'] });
    assert.ok(!page.includes('<img'), page);
    assert.ok(!page.includes('id"><b>'));
  });
});
