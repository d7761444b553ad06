/**
 * @module plugins/oauth/browser-flow
 * The admin UI's leg of authorizing a remote plugin (issue #27): authorization code + PKCE in
 * the signed-in user's own browser, redirected back to Quiver's callback endpoint instead of a
 * CLI's loopback listener. `start` begins the authorization for the owner the API decided from
 * the caller's key (the hub's, the user's or the organisation's: never from the callback) and
 * returns a ticket for a cookie; `finish` redeems the callback. What binds the callback:
 * - the ticket cookie (HttpOnly, SameSite=Lax, scoped to the callback path, 10 minutes): only
 *   the browser that pressed Connect holds it; it is sealed with the hub's key and bound to a
 *   hash of the `state` sent, so it names which server and owner the callback is for and cannot
 *   be moved onto another authorization or altered;
 * - `RemoteOAuth.complete`: the `state` equals the pending one (constant time, single use), the
 *   pending authorization is younger than 10 minutes, and `iss` is the discovered issuer (RFC 9207).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { invalidInput } from '../../core/errors.ts';
import type { SealedSecret } from '../../store/repositories/secrets.ts';
import type { SecretBox } from '../secret-box.ts';
import { ownerLabel, parseOwnerLabel, PENDING_AUTHORIZATION_MS, type DiscoveredAfterAuthorization, type RemoteOAuth, type RemoteOwner } from './remote-oauth.ts';

/** The cookie names of tickets start with this. */
export const TICKET_COOKIE_PREFIX = 'quiver_oauth_';

const ticketSchema = z.object({ url: z.string(), owner: z.string(), plugin: z.string(), expiresAt: z.number() });

/** A ticket cookie to set on the response that starts an authorization. */
export interface TicketCookie {
  name: string;
  value: string;
  maxAgeSeconds: number;
}

/** The browser flow over a `RemoteOAuth`. */
export interface BrowserAuthorization {
  start(input: { plugin: string; url: string; owner: RemoteOwner; redirectUri: string }): Promise<{ authorizationUrl: URL; cookie: TicketCookie }>;
  /** Redeems a callback (its query, the request's cookies); resolves to the plugin it was for. */
  finish(query: URLSearchParams, cookies: Readonly<Record<string, string>>): Promise<{ plugin: string; owner: RemoteOwner; discovered: DiscoveredAfterAuthorization[] }>;
}

function stateHash(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** The name of the ticket cookie for the authorization that sent `state`. */
export function ticketCookieName(state: string): string {
  return `${TICKET_COOKIE_PREFIX}${stateHash(state).slice(0, 24)}`;
}

/** Creates the browser flow. */
export function createBrowserAuthorization(options: { remoteOAuth: RemoteOAuth; secrets: SecretBox; now?: () => number }): BrowserAuthorization {
  const { remoteOAuth, secrets } = options;
  const now = options.now ?? Date.now;
  const context = (hash: string) => `quiver/remote-oauth/browser-ticket/${hash}`;
  return {
    async start({ plugin, url, owner, redirectUri }) {
      const { authorizationUrl } = await remoteOAuth.begin(url, redirectUri, owner);
      const state = authorizationUrl.searchParams.get('state');
      if (state === null) throw invalidInput('the authorization URL carries no state');
      const hash = stateHash(state);
      const sealed = secrets.seal(JSON.stringify({ url, owner: ownerLabel(owner), plugin, expiresAt: now() + PENDING_AUTHORIZATION_MS }), context(hash));
      return {
        authorizationUrl,
        cookie: { name: ticketCookieName(state), value: Buffer.from(JSON.stringify(sealed)).toString('base64url'), maxAgeSeconds: PENDING_AUTHORIZATION_MS / 1000 },
      };
    },

    async finish(query, cookies) {
      const state = query.get('state');
      if (state === null || state.length === 0 || state.length > 512) throw invalidInput('the authorization callback carries no state: refused');
      const hash = stateHash(state);
      const cookie = cookies[ticketCookieName(state)];
      if (cookie === undefined) throw invalidInput('this browser did not start that authorization, or it expired (no ticket cookie): press Connect again');
      let ticket: z.output<typeof ticketSchema>;
      try {
        ticket = ticketSchema.parse(JSON.parse(secrets.open(JSON.parse(Buffer.from(cookie, 'base64url').toString('utf8')) as SealedSecret, context(hash))));
      } catch {
        throw invalidInput('the authorization ticket of this browser does not match the callback: refused');
      }
      if (ticket.expiresAt < now()) throw invalidInput('the authorization took longer than 10 minutes: press Connect again');
      const owner = parseOwnerLabel(ticket.owner);
      if (owner === undefined) throw invalidInput('the authorization ticket names no owner: refused');
      const { discovered } = await remoteOAuth.complete(ticket.url, query, owner);
      return { plugin: ticket.plugin, owner, discovered };
    },
  };
}
