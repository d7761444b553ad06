/**
 * @module access/authorization-server/interactions
 * Quiver's pages in the authorization flow: sign in (email and password of an invited account),
 * consent (what the client asks for, granted only up to the account's own scopes), and the
 * sign-up page of an invitation. Every form carries a CSRF token bound to its flow; sign-in is
 * throttled per account and per client address (429 with Retry-After past the limit, whatever
 * the password). The provider's interaction cookie ties a page to the browser that started the
 * flow; `interactionResult` hands the outcome back to the provider, which redirects onwards.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Hono, type Context } from 'hono';
import type { InteractionDetails } from 'oidc-provider';
import { sha256Hex } from '../../core/hash.ts';
import { isQuiverError } from '../../core/errors.ts';
import type { CsrfTokens } from './csrf.ts';
import type { LoginThrottle } from './throttle.ts';
import type { ProxyTrust } from '../trusted-proxy.ts';
import type { UserDirectory } from './users.ts';
import type { Provider } from './provider.ts';
import { consentPage, loginPage, messagePage, PAGE_HEADERS, signupPage } from './pages.ts';
import { MIN_PASSWORD_LENGTH } from './password.ts';
import { interactionPath } from './provider.ts';

/** The Node request and response of a request (from @hono/node-server), which the provider's helpers need. */
export interface NodeBindings {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
}

type Env = { Bindings: NodeBindings };

export const SIGNUP_PATH = '/oauth/signup';

export interface InteractionOptions {
  provider: () => Provider;
  users: UserDirectory;
  csrf: CsrfTokens;
  throttle: LoginThrottle;
  /** Which peers' X-Forwarded-For names the client (QUIVER_TRUST_PROXY). */
  proxyTrust: ProxyTrust;
}

function html(c: Context<Env>, body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...PAGE_HEADERS, ...headers } });
}

/** Form fields as strings (a field sent twice or as a file counts as absent). */
async function form(c: Context<Env>): Promise<Record<string, string>> {
  const body = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') fields[name] = value;
  return fields;
}


/** The interaction routes: a Hono app mounted by the authorization server's HTTP handler. */
export function interactionRoutes(options: InteractionOptions): Hono<Env> {
  const { users, csrf, throttle, proxyTrust } = options;
  // The throttle's client: the peer, or behind a trusted proxy the address it forwarded for.
  const clientAddress = (c: Context<Env>) => proxyTrust.clientAddress(c.env.incoming.socket.remoteAddress, (name) => c.req.header(name));
  const app = new Hono<Env>();

  async function details(c: Context<Env>): Promise<InteractionDetails | undefined> {
    try {
      const found = await options.provider().interactionDetails(c.env.incoming, c.env.outgoing);
      // The uid of the path must be the interaction of this browser's cookie.
      return found.uid === c.req.param('uid') ? found : undefined;
    } catch {
      return undefined;
    }
  }

  const expired = (c: Context<Env>) => html(c, messagePage('Sign-in expired', 'This sign-in page is no longer valid. Start again from your application.'), 400);
  const refusedCsrf = (c: Context<Env>) => html(c, messagePage('Request refused', 'The form was not sent by this sign-in page (missing or wrong CSRF token). Reload the page and try again.'), 403);

  async function clientName(clientId: unknown): Promise<string> {
    if (typeof clientId !== 'string') return 'An application';
    const client = await options.provider().Client.find(clientId).catch(() => undefined);
    return client?.clientName ?? clientId;
  }

  async function finish(c: Context<Env>, result: Record<string, unknown>): Promise<Response> {
    const target = await options.provider().interactionResult(c.env.incoming, c.env.outgoing, result, { mergeWithLastSubmission: false });
    return new Response(null, { status: 303, headers: { location: target, 'cache-control': 'no-store' } });
  }

  async function renderConsent(c: Context<Env>, found: InteractionDetails): Promise<Response> {
    const user = found.session?.accountId ? await users.active(found.session.accountId) : undefined;
    if (!user) return finish(c, { error: 'login_required', error_description: 'the account is not active' });
    const requested = typeof found.params.scope === 'string' ? found.params.scope.split(' ').filter(Boolean) : [];
    const resources = Object.keys((found.prompt.details.missingResourceScopes as Record<string, string[]> | undefined) ?? {});
    return html(
      c,
      consentPage({
        action: `${interactionPath(found.uid)}/confirm`,
        abortAction: `${interactionPath(found.uid)}/abort`,
        csrf: csrf.issue('interaction', found.uid),
        clientName: await clientName(found.params.client_id),
        clientId: String(found.params.client_id ?? ''),
        ...(typeof found.params.redirect_uri === 'string' ? { redirectUri: found.params.redirect_uri } : {}),
        email: user.email,
        orgId: user.orgId,
        scopes: requested,
        resources: resources.length ? resources : [String(found.params.resource ?? '')],
      }),
    );
  }

  app.get('/oauth/interaction/:uid', async (c) => {
    const found = await details(c);
    if (!found) return expired(c);
    if (found.prompt.name === 'login') {
      return html(c, loginPage({ action: `${interactionPath(found.uid)}/login`, csrf: csrf.issue('interaction', found.uid), clientName: await clientName(found.params.client_id) }));
    }
    if (found.prompt.name === 'consent') return renderConsent(c, found);
    return finish(c, { error: 'invalid_request', error_description: `unsupported prompt ${found.prompt.name}` });
  });

  app.post('/oauth/interaction/:uid/login', async (c) => {
    const fields = await form(c);
    const found = await details(c);
    if (!found) return expired(c);
    if (!csrf.verify('interaction', found.uid, fields.csrf)) return refusedCsrf(c);
    const email = (fields.email ?? '').trim().toLowerCase();
    const name = await clientName(found.params.client_id);
    const page = (error: string, status: number, headers: Record<string, string> = {}) =>
      html(c, loginPage({ action: `${interactionPath(found.uid)}/login`, csrf: csrf.issue('interaction', found.uid), clientName: name, email, error }), status, headers);
    const wait = await throttle.retryAfter(email, clientAddress(c));
    if (wait > 0) return page(`Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minute(s).`, 429, { 'retry-after': String(wait) });
    const user = email && fields.password ? await users.authenticate(email, fields.password) : undefined;
    if (!user) {
      await throttle.failed(email, clientAddress(c));
      return page('Wrong email or password.', 401);
    }
    await throttle.succeeded(email);
    return finish(c, { login: { accountId: user.id } });
  });

  app.post('/oauth/interaction/:uid/confirm', async (c) => {
    const fields = await form(c);
    const found = await details(c);
    if (!found) return expired(c);
    if (!csrf.verify('interaction', found.uid, fields.csrf)) return refusedCsrf(c);
    if (found.prompt.name !== 'consent' || !found.session?.accountId) return expired(c);
    const user = await users.active(found.session.accountId);
    if (!user) return finish(c, { error: 'access_denied', error_description: 'the account is not active' });
    const provider = options.provider();
    const grant = (found.grantId ? await provider.Grant.find(found.grantId) : undefined) ?? new provider.Grant({ accountId: user.id, clientId: String(found.params.client_id) });
    const missingOidc = (found.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
    if (missingOidc.length) grant.addOIDCScope(missingOidc.join(' '));
    // A grant never exceeds the account: of what the client asks, only the account's own scopes.
    const allowed = new Set(user.scopes);
    for (const [resource, scopes] of Object.entries((found.prompt.details.missingResourceScopes as Record<string, string[]> | undefined) ?? {})) {
      const granted = scopes.filter((scope) => allowed.has(scope));
      if (granted.length) grant.addResourceScope(resource, granted.join(' '));
    }
    const grantId = await grant.save();
    return finish(c, { consent: { grantId } });
  });

  app.post('/oauth/interaction/:uid/abort', async (c) => {
    const fields = await form(c);
    const found = await details(c);
    if (!found) return expired(c);
    if (!csrf.verify('interaction', found.uid, fields.csrf)) return refusedCsrf(c);
    return finish(c, { error: 'access_denied', error_description: 'the user denied access' });
  });

  const signup = (token: string, email: string, error?: string, status = 200) =>
    signupPage({ action: SIGNUP_PATH, csrf: csrf.issue('signup', sha256Hex(token)), token, email, minLength: MIN_PASSWORD_LENGTH, ...(error ? { error } : {}) });

  app.get(SIGNUP_PATH, async (c) => {
    const token = c.req.query('token') ?? '';
    const user = token ? await users.invitationOf(token) : undefined;
    if (!user) return html(c, messagePage('Link not valid', 'This sign-up link is not valid any more (used, expired or replaced). Ask your admin for a new one.'), 404);
    return html(c, signup(token, user.email));
  });

  app.post(SIGNUP_PATH, async (c) => {
    const fields = await form(c);
    const token = fields.token ?? '';
    if (!csrf.verify('signup', sha256Hex(token), fields.csrf)) return refusedCsrf(c);
    const user = await users.invitationOf(token);
    if (!user) return html(c, messagePage('Link not valid', 'This sign-up link is not valid any more. Ask your admin for a new one.'), 404);
    if ((fields.password ?? '') !== (fields.confirm ?? '')) return html(c, signup(token, user.email, 'The two passwords differ.'), 400);
    try {
      await users.signUp(token, fields.password ?? '');
    } catch (error) {
      if (isQuiverError(error)) return html(c, signup(token, user.email, error.message), 400);
      throw error;
    }
    return html(c, messagePage('Password set', `You can now sign in as ${user.email} from your MCP client.`));
  });

  return app;
}
