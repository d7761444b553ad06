// Quiver admin UI, Users view (issue #27): the accounts of the built-in authorization server,
// over /api/v1/users with the CLI's permissions (admin keys only, as `quiver user`). List with
// status; Invite (the one-time sign-up link is shown once, in this page only); change an
// account's organisation, roles and scopes; Disable / Enable; New sign-up link (a forgotten
// password); Remove. Same conventions as app.js: data goes into the page as text, never parsed
// as markup; no inline scripts or styles (CSP). The helpers come from app.js.

/** The scopes an account's tokens may carry (src/access/oauth/token-principal.ts TOKEN_SCOPES; `admin` is never one). */
const TOKEN_SCOPES = ['mcp', 'read', 'select', 'metrics'];

const roleList = (text) => [...new Set(text.split(',').map((role) => role.trim()).filter(Boolean))];

/** Renders the Users view into `root`; `ui` holds app.js's helpers. */
export async function renderUsers(root, ui) {
  const { h } = ui;
  root.append(h('h2', {}, 'Users'));
  if (!ui.isAdmin()) {
    root.append(h('p', { className: 'muted', role: 'note' }, 'Managing users needs an admin key (as quiver user does).'));
    return;
  }
  root.append(h('p', { className: 'muted' }, 'Accounts that sign in to the built-in authorization server; their tokens reach /mcp in their organisation with their roles. An invited user sets a password through a one-time link.'));
  const linkTarget = h('div', { 'aria-live': 'polite' });
  const list = h('div', { className: 'users' }, ui.loading());
  const reload = async () => {
    try {
      const { users } = await ui.api('GET', '/api/v1/users');
      list.replaceChildren(usersTable(users, ui, reload, linkTarget));
    } catch (error) {
      if (error.status === 404) {
        list.replaceChildren(h('p', { className: 'muted', role: 'note' }, 'The built-in authorization server is not running here (QUIVER_AUTH_SERVER=off, an external issuer in QUIVER_OAUTH_ISSUER, or auto on a public bind), so there are no accounts to manage.'));
        return;
      }
      list.replaceChildren(ui.errorBox(error));
    }
  };
  root.append(inviteForm(ui, reload, linkTarget), linkTarget, list);
  await reload();
}

/** The one-time link of an invitation or reinvitation, with a Copy button; it is not shown again. */
function linkBox(ui, invitation, verb) {
  const { h } = ui;
  const input = h('input', { type: 'text', readOnly: true, value: invitation.signupUrl, 'aria-label': 'Sign-up link', spellcheck: false, className: 'signup-link' });
  const copy = h('button', { type: 'button', className: 'secondary' }, 'Copy');
  copy.addEventListener('click', async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(invitation.signupUrl);
      ui.toast('Link copied');
    } catch {
      ui.toast('Select the link and copy it (the clipboard is not available here)');
    }
  });
  return h(
    'div',
    { className: 'success', role: 'status', 'aria-label': 'Sign-up link' },
    h('p', {}, h('strong', {}, `${verb} ${invitation.user.email}`), ` — send this link to them; it is shown only now and works once, until ${ui.formatDate(invitation.expiresAt)}.`),
    h('div', { className: 'link-row' }, input, copy),
  );
}

function scopeBoxes(h, chosen, prefix) {
  return h(
    'fieldset',
    { className: 'scopes' },
    h('legend', {}, 'Scopes'),
    TOKEN_SCOPES.map((scope) => h('label', { className: 'inline' }, h('input', { type: 'checkbox', name: `${prefix}-scope`, value: scope, checked: chosen.includes(scope) }), ` ${scope}`)),
  );
}

const checkedScopes = (container) => [...container.querySelectorAll('input[type="checkbox"]:checked')].map((box) => box.value);

function inviteForm(ui, reload, linkTarget) {
  const { h } = ui;
  const email = h('input', { type: 'email', name: 'email', required: true, maxLength: 320, placeholder: 'name@example.com', autocomplete: 'off' });
  const org = h('input', { type: 'text', name: 'orgId', required: true, maxLength: 200, placeholder: 'acme' });
  const roles = h('input', { type: 'text', name: 'roles', placeholder: 'optional, comma separated' });
  const scopes = scopeBoxes(h, ['mcp'], 'invite');
  const submit = h('button', { type: 'submit' }, 'Invite');
  const feedback = h('div');
  const form = h(
    'form',
    { className: 'card', 'aria-label': 'Invite a user' },
    h('h3', {}, 'Invite a user'),
    h('div', { className: 'grid' }, ui.field('Email', email), ui.field('Organisation', org), ui.field('Roles', roles)),
    scopes,
    submit,
    feedback,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    feedback.replaceChildren();
    submit.disabled = true;
    try {
      const invitation = await ui.api('POST', '/api/v1/users', { email: email.value.trim(), orgId: org.value.trim(), roles: roleList(roles.value), scopes: checkedScopes(scopes) });
      linkTarget.replaceChildren(linkBox(ui, invitation, 'Invited'));
      form.reset();
      await reload();
    } catch (error) {
      feedback.replaceChildren(ui.errorBox(error));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

function usersTable(users, ui, reload, linkTarget) {
  const { h } = ui;
  if (users.length === 0) return h('p', { className: 'muted' }, 'No accounts yet: invite one above.');
  return ui.table(
    ['email', 'organisation', 'roles', 'scopes', 'status', 'since', ''],
    users.map((user) => userRow(user, ui, reload, linkTarget)),
    'Accounts',
  );
}

function userRow(user, ui, reload, linkTarget) {
  const { h } = ui;
  const feedback = h('div');
  const act = (label, work) => {
    const button = h('button', { type: 'button', className: label === 'Remove' ? 'danger' : 'secondary', 'aria-label': `${label} ${user.email}` }, label);
    button.addEventListener('click', async () => {
      button.disabled = true;
      feedback.replaceChildren();
      try {
        if ((await work()) !== false) await reload();
      } catch (error) {
        feedback.replaceChildren(ui.errorBox(error));
      } finally {
        button.disabled = false;
      }
    });
    return button;
  };
  const path = `/api/v1/users/${encodeURIComponent(user.id)}`;
  const status = user.status === 'invited' && user.inviteExpiresAt ? h('span', {}, ui.badge('invited', 'pending'), h('div', { className: 'muted small' }, `link until ${ui.formatDate(user.inviteExpiresAt)}`)) : ui.badge(user.status);
  const row = h(
    'tr',
    { 'data-user': user.email },
    h('th', { scope: 'row' }, user.email),
    h('td', {}, user.orgId),
    h('td', {}, user.roles.length ? user.roles.map((role) => h('code', { className: 'chip' }, role)) : h('span', { className: 'muted' }, 'none')),
    h('td', {}, user.scopes.map((scope) => h('code', { className: 'chip' }, scope))),
    h('td', {}, status),
    h('td', {}, ui.formatDate(user.createdAt)),
    h(
      'td',
      { className: 'actions' },
      act('Edit', async () => {
        row.replaceWith(editRow(user, ui, reload));
        return false;
      }),
      user.status === 'disabled'
        ? act('Enable', async () => {
            await ui.api('PUT', `${path}/disabled`, { disabled: false });
            ui.toast(`${user.email} enabled`);
          })
        : act('Disable', async () => {
            await ui.api('PUT', `${path}/disabled`, { disabled: true });
            ui.toast(`${user.email} disabled: it cannot sign in and its tokens stop working`);
          }),
      user.status === 'disabled'
        ? null
        : act('New sign-up link', async () => {
            linkTarget.replaceChildren(linkBox(ui, await ui.api('POST', `${path}/invitation`), 'New sign-up link for'));
          }),
      act('Remove', async () => {
        if (!window.confirm(`Remove ${user.email}? Its tokens stop working.`)) return false;
        await ui.api('DELETE', path);
        ui.toast(`${user.email} removed`);
      }),
      feedback,
    ),
  );
  return row;
}

/** The row in edit mode: organisation, roles and scopes; Save sends only what changed. */
function editRow(user, ui, reload) {
  const { h } = ui;
  const org = h('input', { type: 'text', name: 'orgId', value: user.orgId, required: true, maxLength: 200, 'aria-label': `Organisation of ${user.email}` });
  const roles = h('input', { type: 'text', name: 'roles', value: user.roles.join(', '), 'aria-label': `Roles of ${user.email}` });
  const scopes = scopeBoxes(h, user.scopes, `edit-${user.id}`);
  const feedback = h('div');
  const save = h('button', { type: 'submit' }, 'Save');
  const cancel = h('button', { type: 'button', className: 'secondary' }, 'Cancel');
  cancel.addEventListener('click', () => void reload());
  const form = h('form', { className: 'user-edit', 'aria-label': `Edit ${user.email}` }, h('div', { className: 'grid' }, ui.field('Organisation', org), ui.field('Roles', roles)), scopes, save, ' ', cancel, feedback);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const change = {};
    if (org.value.trim() !== user.orgId) change.orgId = org.value.trim();
    const newRoles = roleList(roles.value);
    if (newRoles.join(',') !== user.roles.join(',')) change.roles = newRoles;
    const newScopes = checkedScopes(scopes);
    if ([...newScopes].sort().join(',') !== [...user.scopes].sort().join(',')) change.scopes = newScopes;
    save.disabled = true;
    try {
      if (Object.keys(change).length > 0) {
        await ui.api('PATCH', `/api/v1/users/${encodeURIComponent(user.id)}`, change);
        ui.toast(`${user.email} changed`);
      }
      await reload();
    } catch (error) {
      save.disabled = false;
      feedback.replaceChildren(ui.errorBox(error));
    }
  });
  return h('tr', { 'data-user': user.email }, h('th', { scope: 'row' }, user.email), h('td', { colSpan: 6 }, form));
}
