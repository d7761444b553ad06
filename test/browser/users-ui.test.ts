/**
 * The admin UI's Users view (issue #27) in a real browser: a real App with the built-in
 * authorization server (loopback bind, QUIVER_AUTH_SERVER=auto) served over HTTP, in Debian's
 * Chromium through playwright-core, on PGlite and PostgreSQL. An admin invites a user (the
 * one-time link is shown once and sets a password in a second tab), changes the account's
 * organisation, roles and scopes, disables and enables it, issues a new sign-up link and removes
 * it; a duplicate invitation shows the conflict; text with markup stays text; a key without
 * `admin` gets no user list (the API refuses it too). What the page shows is checked against the
 * API's own view of the accounts.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/backends.ts';
import { browserSkip, signIn } from '../helpers/browser.ts';
import { openAdminUi, type AdminUi } from '../helpers/admin-ui.ts';

interface ListedUser {
  id: string;
  email: string;
  orgId: string;
  roles: string[];
  scopes: string[];
  status: string;
}

describeEachBackend('admin UI Users view in Chromium (issue #27)', (backend) => {
  let ui: AdminUi;

  const users = async (key = ui.server.adminKey!): Promise<{ status: number; users: ListedUser[] }> => {
    const response = await fetch(new URL('/api/v1/users', ui.server.url), { headers: { authorization: `Bearer ${key}` } });
    const body = (await response.json()) as { users?: ListedUser[] };
    return { status: response.status, users: body.users ?? [] };
  };
  const account = async (email: string) => (await users()).users.find((user) => user.email === email);

  before(async () => {
    if (browserSkip) return;
    ui = await openAdminUi('users-ui', { env: { QUIVER_VERIFY_ON_INSTALL: 'off' }, db: await backend.open(), ignore: /409 \(Conflict\)/ });
  });

  after(async () => {
    if (browserSkip) return;
    await ui?.close();
  });

  it('invites (link shown once, sets a password), edits, disables, enables, reinvites and removes', { skip: browserSkip, timeout: 180_000 }, async () => {
    const { page, server, context, consoleErrors } = ui;
    await signIn(page, server.url, server.adminKey!);
    await page.getByRole('tab', { name: 'Users' }).click();
    await page.getByText('No accounts yet').waitFor();

    const form = page.getByRole('form', { name: 'Invite a user' });
    await form.getByLabel('Email').fill('Alice@acme.test');
    await form.getByLabel('Organisation').fill('acme');
    await form.getByLabel('Roles').fill('dev, ops, dev');
    await form.getByLabel('read', { exact: true }).check();
    await form.getByRole('button', { name: 'Invite' }).click();
    const linkBox = page.getByRole('status', { name: 'Sign-up link' });
    await linkBox.waitFor();
    assert.match(await linkBox.innerText(), /Invited alice@acme\.test — send this link/);
    const link = await linkBox.getByRole('textbox', { name: 'Sign-up link' }).inputValue();
    assert.match(link, new RegExp(`^${server.url}/oauth/signup\\?token=[A-Za-z0-9_-]{43}$`));
    const row = page.locator('tr[data-user="alice@acme.test"]');
    await row.waitFor();
    assert.match(await row.innerText(), /alice@acme\.test\s+acme\s+dev\s*ops\s+mcp\s*read\s+invited/);
    assert.deepEqual(
      (({ orgId, roles, scopes, status }) => ({ orgId, roles, scopes, status }))((await account('alice@acme.test'))!),
      { orgId: 'acme', roles: ['dev', 'ops'], scopes: ['mcp', 'read'], status: 'invited' },
    );

    // The link works: a second tab sets the password; the account becomes active.
    const other = await context.newPage();
    await other.goto(link);
    await other.locator('input[name="password"]').fill('correct horse battery staple');
    await other.locator('input[name="confirm"]').fill('correct horse battery staple');
    await other.getByRole('button', { name: 'Set password' }).click();
    await other.getByText('Password set').waitFor();
    await other.close();
    await page.getByRole('tab', { name: 'Rollouts' }).click();
    await page.getByRole('tab', { name: 'Users' }).click();
    await row.getByText('active').waitFor();
    assert.equal(await page.getByRole('status', { name: 'Sign-up link' }).count(), 0, 'the link is not shown again');

    // A second invitation of the same address is refused with the conflict shown.
    await form.getByLabel('Email').fill('alice@acme.test');
    await form.getByLabel('Organisation').fill('acme');
    await form.getByRole('button', { name: 'Invite' }).click();
    await form.getByRole('alert').getByText(/exists already/).waitFor();

    // Edit: organisation (with markup, shown as text), roles, scopes.
    await row.getByRole('button', { name: 'Edit alice@acme.test' }).click();
    const edit = page.getByRole('form', { name: 'Edit alice@acme.test' });
    await edit.getByLabel('Organisation of alice@acme.test').fill('<img src=x>globex');
    await edit.getByLabel('Roles of alice@acme.test').fill('ops');
    await edit.getByLabel('read', { exact: true }).uncheck();
    await edit.getByLabel('metrics', { exact: true }).check();
    await edit.getByRole('button', { name: 'Save' }).click();
    await row.getByText('<img src=x>globex').waitFor();
    assert.equal(await page.locator('#view img').count(), 0, 'markup in an organisation stays text');
    const edited = (await account('alice@acme.test'))!;
    assert.deepEqual({ orgId: edited.orgId, roles: edited.roles, scopes: [...edited.scopes].sort() }, { orgId: '<img src=x>globex', roles: ['ops'], scopes: ['mcp', 'metrics'] });

    // Disable, then enable.
    await row.getByRole('button', { name: 'Disable alice@acme.test' }).click();
    await row.getByRole('button', { name: 'Enable alice@acme.test' }).waitFor();
    assert.equal((await account('alice@acme.test'))!.status, 'disabled');
    assert.equal(await row.getByRole('button', { name: 'New sign-up link alice@acme.test' }).count(), 0, 'no new link for a disabled account');
    await row.getByRole('button', { name: 'Enable alice@acme.test' }).click();
    await row.getByRole('button', { name: 'Disable alice@acme.test' }).waitFor();
    assert.equal((await account('alice@acme.test'))!.status, 'active');

    // A new sign-up link: another token, shown once; the account keeps its password meanwhile.
    await row.getByRole('button', { name: 'New sign-up link alice@acme.test' }).click();
    await linkBox.waitFor();
    assert.match(await linkBox.innerText(), /New sign-up link for alice@acme\.test/);
    const second = await linkBox.getByRole('textbox', { name: 'Sign-up link' }).inputValue();
    assert.match(second, /\/oauth\/signup\?token=[A-Za-z0-9_-]{43}$/);
    assert.notEqual(second, link);
    assert.equal((await account('alice@acme.test'))!.status, 'active');

    // Remove, after the confirmation (a dismissed one keeps the account).
    page.once('dialog', (dialog) => void dialog.dismiss());
    await row.getByRole('button', { name: 'Remove alice@acme.test' }).click();
    assert.ok(await account('alice@acme.test'), 'dismissing the confirmation keeps the account');
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Remove alice@acme.test' }).click();
    await page.getByText('No accounts yet').waitFor();
    assert.equal(await account('alice@acme.test'), undefined);

    assert.doesNotMatch(await page.locator('#view').innerText(), /\bundefined\b|\bNaN\b|\[object Object\]/);
    assert.deepEqual(consoleErrors, []);
  });

  it('a key without admin sees no accounts; the API refuses it as the CLI would', { skip: browserSkip, timeout: 60_000 }, async () => {
    const { page, server, app } = ui;
    const { key } = await app.apiKeys.create({ name: 'reader', scopes: ['read', 'mcp'] });
    await page.getByRole('button', { name: 'Forget key' }).click();
    await signIn(page, server.url, key);
    await page.getByRole('tab', { name: 'Users' }).click();
    await page.getByText('Managing users needs an admin key').waitFor();
    assert.equal(await page.getByRole('form', { name: 'Invite a user' }).count(), 0);
    assert.equal((await users(key)).status, 403);
  });
});
