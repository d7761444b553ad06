// A remote plugin's OAuth authorization in the Plugins tab (issue #27): whose it is, whether it
// is connected and until when, Connect (authorization code + PKCE in this tab: the browser goes
// to the server's sign-in and comes back to Quiver's callback, then to this page) and
// Disconnect (revokes the grant). Text only, as everywhere in the UI.

/** The outcome of a Connect, told by the callback's redirect (?oauth=connected or ?oauth_error=…); shown once. */
export function oauthReturnNotice({ h }) {
  const params = new URLSearchParams(location.search);
  const connected = params.get('oauth') === 'connected' ? params.get('plugin') : null;
  const failure = params.get('oauth_error');
  if (connected === null && failure === null) return null;
  history.replaceState(null, '', `${location.pathname}${location.hash}`);
  if (failure !== null) {
    return h('div', { className: 'error', role: 'alert' }, h('strong', {}, 'Authorization failed'), ' ', failure);
  }
  return h('div', { className: 'success', role: 'status' }, h('strong', {}, `Connected ${connected}`), ' — Quiver holds its authorization; its tools are discovered.');
}

function ownerText(status) {
  if (status.owner === null) return `per ${status.per}: your key names no ${status.per}`;
  return status.owner.kind === 'hub' ? "the hub's (every caller)" : `${status.owner.kind} ${status.owner.id}`;
}

/** The cell of a remote plugin: status and the buttons; nothing for other plugins. */
export function oauthCell(plugin, { api, h, badge, formatDate, errorBox, toast, reload }) {
  if (plugin.sourceType !== 'url') return null;
  const cell = h('div', { className: 'oauth', 'data-oauth': plugin.name });
  const path = `/api/v1/plugins/${encodeURIComponent(plugin.name)}/oauth`;
  const feedback = h('div', { 'aria-live': 'polite' });

  const connect = async (button) => {
    button.disabled = true;
    try {
      const { authorizationUrl } = await api('POST', `${path}/connect`);
      const target = new URL(authorizationUrl);
      if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new Error('the server named an authorization URL that is not http(s)');
      feedback.replaceChildren(h('p', { className: 'muted' }, `Opening the sign-in at ${target.origin}…`));
      location.assign(target.href);
    } catch (error) {
      button.disabled = false;
      feedback.replaceChildren(errorBox(error));
    }
  };
  const disconnect = async (button) => {
    button.disabled = true;
    try {
      const result = await api('DELETE', path);
      toast(result.revoked ? `${plugin.name} disconnected (revoked at the server)` : `${plugin.name} disconnected (forgotten; the server offers no revocation)`);
      await reload();
    } catch (error) {
      button.disabled = false;
      feedback.replaceChildren(errorBox(error));
    }
  };

  const render = (status) => {
    const locked = status.canChange ? {} : { disabled: true, title: status.per === 'hub' ? 'needs an admin key' : `needs a key naming a ${status.per}` };
    const parts = [];
    if (status.authorized) {
      parts.push(badge('connected', 'active'), ' ', h('span', { className: 'small' }, `as ${ownerText(status)}`));
      if (status.expiresAt) parts.push(h('div', { className: 'muted small' }, `token expires ${formatDate(status.expiresAt)}${status.refreshable ? ' (refreshed before expiry)' : ''}`));
      const button = h('button', { type: 'button', className: 'secondary', ...locked }, 'Disconnect');
      button.addEventListener('click', () => disconnect(button));
      parts.push(button);
    } else {
      const waiting = status.needsAuthorization || status.per !== 'hub';
      if (waiting) parts.push(badge('needs authorization', 'pending'), ' ', h('span', { className: 'small' }, `for ${ownerText(status)}`));
      const button = h('button', { type: 'button', className: waiting ? '' : 'secondary', ...locked }, waiting ? 'Connect' : 'Connect with OAuth');
      button.addEventListener('click', () => connect(button));
      parts.push(h('div', {}, button));
      if (waiting) parts.push(h('div', { className: 'muted small' }, `or run: quiver plugin authorize ${status.url}${status.owner && status.owner.kind !== 'hub' ? ` --${status.owner.kind === 'user' ? 'user' : 'org'} ${status.owner.id}` : ''}`));
    }
    cell.replaceChildren(...parts, feedback);
  };

  void api('GET', path).then(render, (error) => cell.replaceChildren(errorBox(error)));
  return cell;
}
