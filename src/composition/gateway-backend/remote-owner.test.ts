/**
 * Issue #27: whose authorization a session's request to a remote plugin carries, over the real
 * remote OAuth service and database (both backends), with tokens seeded sealed as `complete`
 * leaves them. Hub servers and local plugins keep their spec; a per-organisation server binds the
 * spec to the session's organisation (the same object each time, so the supervisor's per-object
 * caches hold); a session without an organisation, and an organisation that never authorized,
 * are refused with the command that connects it; a row sealed for another owner does not open.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import { createSecretBox } from '../../plugins/secret-box.ts';
import { createRemoteOAuth } from '../../plugins/oauth/remote-oauth.ts';
import { upsertRemoteOAuth } from '../../store/repositories/remote-oauth.ts';
import { parseUpstreamSpec } from '../../runtime/types.ts';
import type { BackendSession } from '../../gateway/backend.ts';
import { createRemoteOwnership } from './remote-owner.ts';

const URL_ = 'https://mcp.example.com/mcp';
const session = (orgId: string | null, userId: string | null): BackendSession => ({ sessionId: 's', workspace: 'default', project: null, orgId, userId, roles: [], tier: null });

describeEachBackend('remote plugin owners of a session', (backend) => {
  it('binds a per-organisation server to the session organisation and fails closed otherwise', async () => {
    const db = await backend.open();
    try {
      const secrets = createSecretBox(randomBytes(32));
      const remote = createRemoteOAuth({ db, secrets });
      const owned = createRemoteOwnership(remote);
      const http = parseUpstreamSpec({ pluginId: 'p1', pluginName: 'saas', version: '1', trustLevel: 'OFFICIAL', transport: 'http', url: URL_ });
      const stdio = parseUpstreamSpec({ pluginId: 'p2', pluginName: 'local', version: '1', trustLevel: 'OFFICIAL', transport: 'stdio', command: 'node' });

      // Default: the hub's authorization, the spec as it is.
      assert.equal(await owned(http, session('acme', 'bob')), http);
      assert.equal(await owned(stdio, session(null, null)), stdio);

      await remote.setOwnerKind(URL_, 'organisation');
      await assert.rejects(remote.setOwnerKind(URL_, 'everyone' as never), /must be one of hub, user, organisation/);
      assert.equal(await remote.ownerKind(URL_), 'organisation');
      await assert.rejects(owned(http, session(null, 'bob')), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'missing_credential');
        assert.match(error.message, /acts with each organisation's own authorization, and this session has no organisation/);
        return true;
      });
      await assert.rejects(owned(http, session('acme', 'bob')), /no authorization at https:\/\/mcp\.example\.com\/mcp for organisation 'acme': authorize it with 'quiver plugin authorize https:\/\/mcp\.example\.com\/mcp --org acme'/);

      const tokens = JSON.stringify({ tokens: { access_token: 'acme-token', token_type: 'Bearer' }, expiresAt: Date.now() + 3_600_000 });
      await upsertRemoteOAuth(db, URL_, secrets.seal(tokens, `quiver/remote-oauth/${URL_}#organisation:acme`), new Date(), { kind: 'organisation', id: 'acme' });
      const bound = await owned(http, session('acme', 'bob'));
      assert.equal(bound.transport === 'http' ? bound.authorizationOwner : undefined, 'organisation:acme');
      assert.equal(await owned(http, session('acme', 'carol')), bound, 'one derived spec per owner');
      assert.equal(await remote.accessToken(URL_, { kind: 'organisation', id: 'acme' }), 'acme-token');
      assert.equal(await remote.accessToken(URL_), undefined, "the organisation's token is not the hub's");
      await assert.rejects(owned(http, session('globex', 'dave')), /for organisation 'globex': .*--org globex/);

      // A row sealed for the hub, stored under another owner, does not open as that owner's.
      await upsertRemoteOAuth(db, URL_, secrets.seal(tokens, `quiver/remote-oauth/${URL_}`), new Date(), { kind: 'organisation', id: 'globex' });
      await assert.rejects(remote.accessToken(URL_, { kind: 'organisation', id: 'globex' }));
      await assert.rejects(remote.accessToken(URL_, { kind: 'user', id: '' }), /needs the user's id/);

      const revoked = await remote.revoke(URL_);
      assert.deepEqual({ forgotten: revoked.forgotten, owners: revoked.owners }, { forgotten: true, owners: 2 });
      assert.equal(await remote.accessToken(URL_, { kind: 'organisation', id: 'acme' }), undefined);
    } finally {
      await db.close();
    }
  });
});
