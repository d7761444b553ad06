/**
 * @module api/routes/plugins/oauth
 * A remote plugin's OAuth authorization over HTTP (issue #27), for the admin UI's Connect and
 * Disconnect. Whose authorization a request concerns follows from the server's setting and the
 * caller's key, never from the request: the hub's (admin scope to change it), else the key's
 * user or organisation (`read` scope: users connect themselves).
 * - `GET /api/v1/plugins/:id/oauth`: whose it is, connected or not, when the token expires;
 * - `POST /api/v1/plugins/:id/oauth/connect`: starts authorization code + PKCE; answers the
 *   URL to open and sets the ticket cookie that binds the callback to this browser;
 * - `DELETE /api/v1/plugins/:id/oauth`: revokes (RFC 7009) and forgets that owner's grant;
 * - `GET /api/v1/oauth/callback` (public: the browser comes back from the authorization server
 *   without the key): redeems, then sends the browser back to the UI with the outcome.
 * The redirect URI is `QUIVER_PUBLIC_URL` + the callback path, else the request's own origin.
 */
import type { Context, Hono } from 'hono';
import type { ProxyTrust } from '../../../access/trusted-proxy.ts';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { invalidInput, QuiverError, ErrorCodes } from '../../../core/errors.ts';
import type { Principal } from '../../../access/api-keys.ts';
import { BROWSER_CALLBACK_PATH, CLIENT_METADATA_PATH, clientMetadataDocument, clientMetadataUrl } from '../../../plugins/oauth/client-metadata.ts';
import { TICKET_COOKIE_PREFIX, ticketCookieName, type BrowserAuthorization } from '../../../plugins/oauth/browser-flow.ts';
import { HUB_OWNER, type RemoteOAuth, type RemoteOwner, type RemoteOwnerKind } from '../../../plugins/oauth/remote-oauth.ts';
import { principalWith, type ApiEnv } from '../../http.ts';
import type { ApiRouteModule } from '../../app.ts';
import type { PluginRouteParts } from './parts.ts';

export const OAUTH_CALLBACK_PATH = BROWSER_CALLBACK_PATH;

/** What the routes use. */
export interface OAuthRouteServices {
  remoteOAuth: RemoteOAuth;
  browser: BrowserAuthorization;
  /** Quiver's public base URL (QUIVER_PUBLIC_URL); absent: the request's origin. */
  publicUrl?: string | undefined;
  /** Behind a proxy named in QUIVER_TRUST_PROXY, the request's origin is the one it forwarded (X-Forwarded-Proto / -Host). */
  proxyTrust?: ProxyTrust | undefined;
}

/** The owner a caller acts for at a server: the hub's, or the key's user / organisation (undefined when the key has none). */
function ownerFor(per: RemoteOwnerKind, principal: Principal): RemoteOwner | undefined {
  if (per === 'hub') return HUB_OWNER;
  const id = per === 'user' ? principal.userId : principal.orgId;
  return id === null ? undefined : { kind: per, id };
}

/** The remote URL of a plugin installed from one; anything else has no OAuth authorization. */
async function remotePlugin(parts: Pick<PluginRouteParts, 'plugins' | 'visibility'>, c: Context<ApiEnv>): Promise<{ name: string; url: string; needsAuthorization: boolean }> {
  const details = await parts.plugins.show(await parts.visibility.plugin(c));
  const url = details.plugin.source['url'];
  if (details.plugin.sourceType !== 'url' || typeof url !== 'string') throw invalidInput(`plugin '${details.plugin.name}' is not a remote MCP server: it has no OAuth authorization`);
  return { name: details.plugin.name, url, needsAuthorization: details.plugin.source['needsAuthorization'] === true };
}

/** The owner a change concerns, checked: the hub's needs an admin key, a user's or organisation's a key naming one. */
function changingOwner(c: Context<ApiEnv>, per: RemoteOwnerKind): RemoteOwner {
  const principal = principalWith(c, per === 'hub' ? 'admin' : 'read');
  const owner = ownerFor(per, principal);
  if (owner === undefined) throw new QuiverError(ErrorCodes.forbidden, `this server is authorized per ${per}, and your key names no ${per}: use a key with one`);
  return owner;
}

function publicBase(services: OAuthRouteServices, c: Context<ApiEnv>): string {
  if (services.publicUrl !== undefined) return services.publicUrl.replace(/\/+$/, '');
  const origin = new URL(c.req.url).origin;
  // On @hono/node-server the env carries the Node request: its socket's peer is the proxy, if any.
  const peer = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
  return services.proxyTrust ? services.proxyTrust.origin(peer, (name) => c.req.header(name), origin) : origin;
}

/** Routes of a remote plugin's authorization. */
export function oauthRoutes(parts: Pick<PluginRouteParts, 'plugins' | 'visibility'>, services: OAuthRouteServices): ApiRouteModule {
  const { remoteOAuth, browser } = services;
  // Quiver's Client ID Metadata Document, served where its URL (the client_id) says, when a public https URL is configured.
  const cimd = clientMetadataUrl(services.publicUrl) === undefined ? undefined : clientMetadataDocument(services.publicUrl!);
  return {
    publicPaths: [OAUTH_CALLBACK_PATH, ...(cimd === undefined ? [] : [CLIENT_METADATA_PATH])],
    register(app: Hono<ApiEnv>) {
      if (cimd !== undefined) {
        app.get(CLIENT_METADATA_PATH, (c) => {
          c.header('cache-control', 'public, max-age=3600');
          return c.json(cimd);
        });
      }
      app.get('/api/v1/plugins/:id/oauth', async (c) => {
        const principal = principalWith(c, 'read');
        const plugin = await remotePlugin(parts, c);
        const per = await remoteOAuth.ownerKind(plugin.url);
        const owner = ownerFor(per, principal);
        const status = owner === undefined ? undefined : await remoteOAuth.status(plugin.url, owner);
        return c.json({
          plugin: plugin.name,
          url: plugin.url,
          per,
          owner: owner === undefined ? null : { kind: owner.kind, id: owner.id || null },
          needsAuthorization: plugin.needsAuthorization,
          authorized: status?.authorized ?? false,
          expiresAt: status?.expiresAt?.toISOString() ?? null,
          refreshable: status?.refreshable ?? false,
          pending: status?.pending ?? false,
          canChange: owner !== undefined && (per !== 'hub' || principal.scopes.includes('admin')),
        });
      });
      app.post('/api/v1/plugins/:id/oauth/connect', async (c) => {
        const plugin = await remotePlugin(parts, c);
        const owner = changingOwner(c, await remoteOAuth.ownerKind(plugin.url));
        const base = publicBase(services, c);
        const { authorizationUrl, cookie } = await browser.start({ plugin: plugin.name, url: plugin.url, owner, redirectUri: `${base}${OAUTH_CALLBACK_PATH}` });
        // Lax: the browser sends it on the top-level redirect back from the authorization server.
        setCookie(c, cookie.name, cookie.value, { path: OAUTH_CALLBACK_PATH, httpOnly: true, sameSite: 'Lax', secure: base.startsWith('https:'), maxAge: cookie.maxAgeSeconds });
        c.header('cache-control', 'no-store');
        return c.json({ authorizationUrl: authorizationUrl.href });
      });
      app.delete('/api/v1/plugins/:id/oauth', async (c) => {
        const plugin = await remotePlugin(parts, c);
        const owner = changingOwner(c, await remoteOAuth.ownerKind(plugin.url));
        return c.json(await remoteOAuth.disconnect(plugin.url, owner));
      });
      app.get(OAUTH_CALLBACK_PATH, async (c) => {
        const query = new URL(c.req.url).searchParams;
        const cookies = Object.fromEntries(Object.entries(getCookie(c)).filter(([name]) => name.startsWith(TICKET_COOKIE_PREFIX)));
        let target: string;
        try {
          const { plugin } = await browser.finish(query, cookies);
          target = `/ui/?oauth=connected&plugin=${encodeURIComponent(plugin)}#plugins`;
        } catch (error) {
          // Shown as text by the UI; our own message (the server's `error` code at most), never a token.
          const message = error instanceof QuiverError ? error.message : 'the authorization could not be completed';
          target = `/ui/?oauth_error=${encodeURIComponent(message.slice(0, 400))}#plugins`;
        }
        // The ticket is single use; other tabs' tickets stay.
        const state = query.get('state');
        if (state !== null && cookies[ticketCookieName(state)] !== undefined) deleteCookie(c, ticketCookieName(state), { path: OAUTH_CALLBACK_PATH });
        c.header('cache-control', 'no-store');
        c.header('referrer-policy', 'no-referrer');
        return c.redirect(target, 303);
      });
    },
    openapi: {
      '/api/v1/plugins/:id/oauth': {
        get: { summary: "A remote plugin's OAuth authorization for the caller (the hub's, or the key's user / organisation): connected, expiry, owner (issue #27); read scope", tags: ['plugins'] },
        delete: { summary: "Disconnect: revoke (RFC 7009) and forget the caller's owner's grant; the hub's needs admin scope", tags: ['plugins'] },
      },
      '/api/v1/plugins/:id/oauth/connect': {
        post: { summary: 'Start authorization code + PKCE in this browser: answers the URL to open and sets the ticket cookie the callback needs; the hub\'s needs admin scope', tags: ['plugins'] },
      },
      [CLIENT_METADATA_PATH]: {
        get: { summary: "Quiver's OAuth Client ID Metadata Document (public; served when QUIVER_PUBLIC_URL is an https URL): its URL is Quiver's client_id at authorization servers that support it", tags: ['plugins'] },
      },
      [OAUTH_CALLBACK_PATH]: {
        get: { summary: 'The authorization response (public): checks the ticket cookie, state and iss, redeems the code, and redirects to the admin UI with the outcome', tags: ['plugins'] },
      },
    },
  };
}
