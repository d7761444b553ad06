/**
 * The checks `RemoteOAuth.complete` makes before any code is redeemed (issue #27): a pending
 * authorization must exist and be younger than 10 minutes, the callback's state must be the one
 * sent, and its `iss` must be the discovered issuer (RFC 9207), present when the server promises
 * it. The state is seeded sealed, as `begin` leaves it. A token that expires within the margin and
 * cannot be refreshed is an error naming how to connect. Both backends.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import { createSecretBox } from '../secret-box.ts';
import { findRemoteOAuth, upsertRemoteOAuth } from '../../store/repositories/remote-oauth.ts';
import { createRemoteOAuth, PENDING_AUTHORIZATION_MS } from './remote-oauth.ts';

const URL_ = 'https://mcp.example.com/mcp';

describeEachBackend('remote OAuth callback checks', (backend) => {
  it('refuses no pending authorization, an old one, a forged state, another issuer and a missing promised iss', async () => {
    const db = await backend.open();
    try {
      const secrets = createSecretBox(randomBytes(32));
      let now = 1_000_000;
      const remote = createRemoteOAuth({ db, secrets, now: () => now });
      const seed = async (metadata: Record<string, unknown>) =>
        upsertRemoteOAuth(db, URL_, secrets.seal(JSON.stringify({ pending: { state: 'sent-state', codeVerifier: 'v', startedAt: now }, discovery: { authorizationServerUrl: 'https://as.example.com', authorizationServerMetadata: metadata } }), `quiver/remote-oauth/${URL_}`), new Date(now));
      const complete = (params: Record<string, string>) => remote.complete(URL_, new URLSearchParams(params));

      await assert.rejects(complete({ state: 'sent-state', code: 'c' }), /no authorization of .* is pending/);
      await seed({ issuer: 'https://as.example.com' });
      await assert.rejects(complete({ state: 'other-state', code: 'c' }), /does not carry the state Quiver sent/);
      await assert.rejects(complete({ code: 'c' }), /does not carry the state Quiver sent/);
      await assert.rejects(complete({ state: 'sent-state', code: 'c', iss: 'https://evil.example.com' }), /from issuer 'https:\/\/evil\.example\.com', not 'https:\/\/as\.example\.com'/);
      await seed({ issuer: 'https://as.example.com', authorization_response_iss_parameter_supported: true });
      await assert.rejects(complete({ state: 'sent-state', code: 'c' }), /lacks the iss its server promises/);
      // An error answer ends the pending authorization without a token request.
      await assert.rejects(complete({ state: 'sent-state', error: 'access_denied', iss: 'https://as.example.com' }), /refused: access_denied/);
      await assert.rejects(complete({ state: 'sent-state', code: 'c', iss: 'https://as.example.com' }), /no authorization of .* is pending/);
      await seed({ issuer: 'https://as.example.com' });
      now += PENDING_AUTHORIZATION_MS + 1;
      await assert.rejects(complete({ state: 'sent-state', code: 'c' }), /older than 10 minutes/);
      assert.ok(!JSON.stringify(await findRemoteOAuth(db, URL_)).includes('sent-state'), 'the state is stored sealed');
      assert.deepEqual(await remote.status(URL_), { authorized: false, expiresAt: undefined, refreshable: false, pending: true });
      await assert.rejects(remote.status('ftp://x'), /not an http\(s\) URL/);
      assert.equal(await remote.accessToken(URL_), undefined, 'never authorized: no token, no error');
      // A token past its margin without a refresh token: a clear error naming how to connect, not a hang.
      await upsertRemoteOAuth(db, URL_, secrets.seal(JSON.stringify({ tokens: { access_token: 'a', token_type: 'Bearer' }, expiresAt: now + 1_000 }), `quiver/remote-oauth/${URL_}`), new Date(now));
      await assert.rejects(remote.accessToken(URL_), (error: Error) => /has expired and cannot be refreshed: authorize it with 'quiver plugin authorize https:\/\/mcp\.example\.com\/mcp'/.test(error.message));
      await upsertRemoteOAuth(db, URL_, secrets.seal(JSON.stringify({ tokens: { access_token: 'still-good', token_type: 'Bearer' }, expiresAt: now + 3_600_000 }), `quiver/remote-oauth/${URL_}`), new Date(now));
      assert.equal(await remote.accessToken(URL_), 'still-good', 'a token far from expiry is used as it is');
    } finally {
      await db.close();
    }
  });
});
