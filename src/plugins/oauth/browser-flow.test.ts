/**
 * The browser flow's ticket (issue #27): bound to the state it was made for, sealed with the
 * hub's key, expiring after 10 minutes; only a matching, fresh, untampered ticket reaches
 * `RemoteOAuth.complete`, with the server and owner the ticket names (never the callback's).
 * The RemoteOAuth here records calls: what it does with them is tested against a real
 * provider in test/browser/remote-oauth-ui.test.ts.
 */
import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../secret-box.ts';
import { createBrowserAuthorization, ticketCookieName } from './browser-flow.ts';
import { PENDING_AUTHORIZATION_MS, type RemoteOAuth } from './remote-oauth.ts';

describe('remote OAuth browser flow ticket', () => {
  it('redeems only with the fresh ticket of the same state, for the owner it names', async () => {
    const completed: Array<{ url: string; owner: unknown }> = [];
    let sentState = 'state-one';
    const remoteOAuth = {
      begin: async () => ({ authorizationUrl: new URL(`https://as.example.com/authorize?state=${sentState}`) }),
      complete: async (url: string, _query: URLSearchParams, owner: unknown) => (completed.push({ url, owner }), { discovered: [] }),
    } as unknown as RemoteOAuth;
    let now = 1_000_000;
    const secrets = createSecretBox(randomBytes(32));
    const flow = createBrowserAuthorization({ remoteOAuth, secrets, now: () => now });
    const first = await flow.start({ plugin: 'remote', url: 'https://mcp.example.com/mcp', owner: { kind: 'user', id: 'bob' }, redirectUri: 'https://quiver.example.com/api/v1/oauth/callback' });
    assert.equal(first.cookie.name, ticketCookieName('state-one'));
    assert.equal(first.cookie.maxAgeSeconds, 600);
    assert.ok(!Buffer.from(first.cookie.value, 'base64url').toString().includes('bob'), 'the ticket is sealed');
    sentState = 'state-two';
    const second = await flow.start({ plugin: 'remote', url: 'https://mcp.example.com/mcp', owner: { kind: 'hub', id: '' }, redirectUri: 'https://quiver.example.com/api/v1/oauth/callback' });

    const query = (state: string) => new URLSearchParams({ state, code: 'c' });
    await assert.rejects(flow.finish(new URLSearchParams({ code: 'c' }), {}), /carries no state/);
    await assert.rejects(flow.finish(query('state-one'), {}), /did not start that authorization/);
    // The hub's ticket moved under the name of bob's state: it does not open (bound to its state).
    await assert.rejects(flow.finish(query('state-one'), { [first.cookie.name]: second.cookie.value }), /does not match the callback/);
    await assert.rejects(flow.finish(query('state-one'), { [first.cookie.name]: `${first.cookie.value.slice(0, -4)}AAAA` }), /does not match the callback/);
    assert.equal(completed.length, 0);
    const done = await flow.finish(query('state-one'), { [first.cookie.name]: first.cookie.value });
    assert.deepEqual(done.owner, { kind: 'user', id: 'bob' });
    assert.deepEqual(completed, [{ url: 'https://mcp.example.com/mcp', owner: { kind: 'user', id: 'bob' } }]);
    now += PENDING_AUTHORIZATION_MS + 1;
    await assert.rejects(flow.finish(query('state-two'), { [second.cookie.name]: second.cookie.value }), /longer than 10 minutes/);
    assert.equal(completed.length, 1);
  });
});
