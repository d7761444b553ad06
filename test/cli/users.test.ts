/**
 * `quiver user …` (issue #27): the admin's commands for the built-in authorization server's
 * accounts, run through the real CLI runner on the real store of each backend: an invitation
 * prints a one-time sign-up link at Quiver's origin (QUIVER_AUTH_ISSUER when set), a second
 * invitation of the same email is refused, `admin` is not a scope an account may hold, and
 * update / disable / reinvite / remove do what they say.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { runInProcess } from '../helpers/cli.ts';

describeEachBackend('quiver user (built-in authorization server accounts)', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let drop: () => Promise<void>;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-users-'));
    const store = await processStore(backend);
    drop = store.drop;
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'data'), QUIVER_AUTH_ISSUER: 'https://quiver.example.com', ...store.env };
  });

  after(async () => {
    await drop?.();
    rmSync(root, { recursive: true, force: true });
  });

  it('invites, lists, updates, disables, reinvites and removes', { timeout: 180_000 }, async () => {
    const invited = await runInProcess(['user', 'invite', 'Bob@Acme.test', '--org', 'acme', '--role', 'dev', '--json'], env);
    assert.equal(invited.code, 0, invited.stderr);
    const invitation = JSON.parse(invited.stdout) as { user: { id: string; email: string; status: string; scopes: string[] }; signupUrl: string };
    assert.match(invitation.signupUrl, /^https:\/\/quiver\.example\.com\/oauth\/signup\?token=[A-Za-z0-9_-]{43}$/);
    assert.deepEqual([invitation.user.email, invitation.user.status, invitation.user.scopes], ['bob@acme.test', 'invited', ['mcp']]);

    const again = await runInProcess(['user', 'invite', 'bob@acme.test', '--org', 'acme'], env);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /exists already/);
    const admin = await runInProcess(['user', 'invite', 'eve@acme.test', '--org', 'acme', '--scope', 'admin'], env);
    assert.notEqual(admin.code, 0, 'admin is not a scope an account may hold');
    const noOrg = await runInProcess(['user', 'invite', 'eve@acme.test'], env);
    assert.match(noOrg.stderr, /--org/);

    const updated = await runInProcess(['user', 'update', 'bob@acme.test', '--org', 'globex', '--scope', 'mcp', '--scope', 'read', '--json'], env);
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual((JSON.parse(updated.stdout) as { user: { orgId: string; roles: string[]; scopes: string[] } }).user, { ...(JSON.parse(updated.stdout) as { user: object }).user, orgId: 'globex', roles: ['dev'], scopes: ['mcp', 'read'] });

    const disabled = await runInProcess(['user', 'disable', invitation.user.id], env);
    assert.match(disabled.stdout, /bob@acme\.test .*: disabled/);
    assert.notEqual((await runInProcess(['user', 'reinvite', 'bob@acme.test'], env)).code, 0, 'a disabled account gets no new link');
    await runInProcess(['user', 'enable', 'bob@acme.test'], env);
    const reinvited = await runInProcess(['user', 'reinvite', 'bob@acme.test', '--json'], env);
    assert.notEqual((JSON.parse(reinvited.stdout) as { signupUrl: string }).signupUrl, invitation.signupUrl, 'a new link');

    const listed = await runInProcess(['user', 'list'], env);
    assert.match(listed.stdout, /bob@acme\.test\s+\S+\s+invited\s+globex\s+dev\s+mcp,read/);
    assert.equal((await runInProcess(['user', 'remove', 'bob@acme.test'], env)).code, 0);
    assert.doesNotMatch((await runInProcess(['user', 'list'], env)).stdout, /bob@/);
  });
});
