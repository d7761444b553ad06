/**
 * @module access/authorization-server/pages
 * The server-rendered pages of the built-in authorization server: sign in, consent, sign up
 * and a message page. Every value is HTML-escaped (client names and URIs come from whoever
 * registered the client); no script runs on them, and the headers forbid framing and any
 * resource but inline styles.
 */

/** Escapes text for HTML content and double-quoted attributes. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`]/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** Headers of every page. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0}main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .2rem}input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:1.2rem;padding:.55rem 1.2rem;font-size:1rem;cursor:pointer}.error{color:#a00;background:#fee;padding:.5rem;border-radius:4px}
.muted{color:#555;font-size:.9rem}ul{padding-left:1.2rem}form.inline{display:inline}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Quiver</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

const errorBox = (error: string | undefined) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '');

/** The sign-in form. */
export function loginPage(options: { action: string; csrf: string; clientName: string; email?: string; error?: string }): string {
  return page(
    'Sign in',
    `<h1>Sign in to Quiver</h1><p class="muted">${escapeHtml(options.clientName)} asks to use Quiver on your behalf.</p>${errorBox(options.error)}
<form method="post" action="${escapeHtml(options.action)}"><input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(options.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

/** The consent form: what the client asks for, for which resource, as whom. */
export function consentPage(options: { action: string; abortAction: string; csrf: string; clientName: string; clientId: string; redirectUri?: string; email: string; orgId: string; scopes: readonly string[]; resources: readonly string[] }): string {
  const list = (items: readonly string[]) => `<ul>${items.map((item) => `<li><code>${escapeHtml(item)}</code></li>`).join('')}</ul>`;
  return page(
    'Allow access',
    `<h1>Allow ${escapeHtml(options.clientName)}?</h1>
<p>Signed in as <strong>${escapeHtml(options.email)}</strong> (organisation <code>${escapeHtml(options.orgId)}</code>).</p>
<p>The application asks for:</p>${list(options.scopes.length ? options.scopes : ['(no scope)'])}
<p>at:</p>${list(options.resources)}
<p class="muted">Client <code>${escapeHtml(options.clientId)}</code>${options.redirectUri ? `, returning to <code>${escapeHtml(options.redirectUri)}</code>` : ''}. It will see only what your account may see.</p>
<form method="post" action="${escapeHtml(options.action)}" class="inline"><input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}"><button type="submit">Allow</button></form>
<form method="post" action="${escapeHtml(options.abortAction)}" class="inline"><input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}"><button type="submit">Deny</button></form>`,
  );
}

/** The sign-up form of an invitation. */
export function signupPage(options: { action: string; csrf: string; token: string; email: string; minLength: number; error?: string }): string {
  return page(
    'Set your password',
    `<h1>Welcome to Quiver</h1><p>Set a password for <strong>${escapeHtml(options.email)}</strong>.</p>${errorBox(options.error)}
<form method="post" action="${escapeHtml(options.action)}"><input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}"><input type="hidden" name="token" value="${escapeHtml(options.token)}">
<label for="password">Password (at least ${options.minLength} characters)</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="${options.minLength}" required>
<label for="confirm">Repeat it</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" required>
<button type="submit">Set password</button></form>`,
  );
}

/** A page that only says something. */
export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}
