/**
 * @module plugins/oauth/remote-oauth
 * Quiver as an OAuth client of remote MCP servers that answer 401 (issue #27; MCP
 * authorization). The protocol is the SDK's (`@modelcontextprotocol/sdk/client/auth.js`: the
 * 401's resource metadata, authorization server discovery, Dynamic Client Registration,
 * authorization code with PKCE and a resource indicator, refresh); what is Quiver's is where the
 * state lives and when it is used:
 * - the state of each server (by URL) is one sealed value (`secret-box`, bound to the URL),
 *   written after every step, so any replica can use or refresh it;
 * - `begin` registers if needed and returns the URL to open in a browser; `complete` checks the
 *   callback's `state` (constant time) and `iss` (RFC 9207) before redeeming the code;
 * - `accessToken` refreshes a token that expires within the margin before handing it out, one
 *   refresh at a time per server in this process, and never starts an interactive flow: without
 *   a usable token it says how to connect (`missing_credential`);
 * - `revoke` revokes the refresh and access tokens at the authorization server (RFC 7009) when
 *   it offers revocation, and forgets the state.
 * - each authorization belongs to an owner: the hub (one account for every caller, the default),
 *   a Quiver user or an organisation, as the admin sets per server URL (`setOwnerKind`); a state
 *   is sealed bound to its URL and owner, so one owner's row can never be opened as another's.
 * Tokens are never logged and never appear in errors.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { QuiverError, ErrorCodes, invalidInput } from '../../core/errors.ts';
import type { Database } from '../../store/database.ts';
import {
  deleteRemoteOAuth,
  findRemoteOAuth,
  findRemoteOwnerKind,
  listRemoteOAuthOwners,
  setRemoteOwnerKind,
  upsertRemoteOAuth,
  type RemoteOwnerKey,
  type RemoteOwnerKind,
} from '../../store/repositories/remote-oauth.ts';
import type { SecretBox } from '../secret-box.ts';
import { createGuardedFetch, parseOAuthNetworkPolicy, type GuardedFetchFactory } from './network-guard.ts';

/**
 * The SDK's OAuth client loads on the first authorization, not with this module (issue #28): the
 * CLI's command list imports this module, so `quiver --help` and forwarded commands paid for it.
 */
const auth: typeof import('@modelcontextprotocol/sdk/client/auth.js').auth = async (...args) => (await import('@modelcontextprotocol/sdk/client/auth.js')).auth(...args);

/** A pending authorization is redeemable for this long (ms). */
export const PENDING_AUTHORIZATION_MS = 10 * 60_000;
/** Tokens expiring within this margin are refreshed before use (ms). */
export const DEFAULT_REFRESH_MARGIN_MS = 60_000;

const stateSchema = z.object({
  client: z.record(z.string(), z.unknown()).optional(),
  tokens: z.record(z.string(), z.unknown()).optional(),
  /** When the access token expires (epoch ms), from `expires_in` at the time it was saved. */
  expiresAt: z.number().optional(),
  discovery: z.record(z.string(), z.unknown()).optional(),
  redirectUri: z.string().optional(),
  pending: z.object({ state: z.string(), codeVerifier: z.string().default(''), startedAt: z.number() }).optional(),
});
type StoredState = z.output<typeof stateSchema>;

export type { RemoteOwnerKey as RemoteOwner, RemoteOwnerKind } from '../../store/repositories/remote-oauth.ts';

/** The hub's own authorization (every caller acts as one account at the server). */
export const HUB_OWNER: RemoteOwnerKey = Object.freeze({ kind: 'hub', id: '' });
export const REMOTE_OWNER_KINDS: readonly RemoteOwnerKind[] = ['hub', 'user', 'organisation'];

/** 'user:alice', 'organisation:acme', or 'hub': how an owner is named in keys and messages. */
export function ownerLabel(owner: RemoteOwnerKey): string {
  return owner.kind === 'hub' ? 'hub' : `${owner.kind}:${owner.id}`;
}

/** The owner an `ownerLabel` names; undefined for anything else. */
export function parseOwnerLabel(label: string): RemoteOwnerKey | undefined {
  if (label === 'hub') return HUB_OWNER;
  const match = /^(user|organisation):(.{1,512})$/s.exec(label);
  return match ? { kind: match[1] as RemoteOwnerKind, id: match[2]! } : undefined;
}

/** What an admin sees of a server's authorization (no token material). */
export interface RemoteAuthorizationStatus {
  authorized: boolean;
  expiresAt: Date | undefined;
  refreshable: boolean;
  pending: boolean;
}

/** What the discovery after an authorization did for one waiting plugin (discover-after-authorization.ts). */
export interface DiscoveredAfterAuthorization {
  plugin: string;
  tools?: number;
  error?: string;
}

/** The OAuth client side for remote plugins. */
export interface RemoteOAuth {
  /** Starts an authorization of the server at `url`; open `authorizationUrl` in a browser, the callback goes to `redirectUri`. */
  begin(url: string, redirectUri: string, owner?: RemoteOwnerKey): Promise<{ authorizationUrl: URL }>;
  /**
   * Redeems the callback's parameters (the query of `redirectUri`) after checking state and
   * issuer; then discovers the plugins that waited for this authorization (`onAuthorized`).
   */
  complete(url: string, callback: URLSearchParams, owner?: RemoteOwnerKey): Promise<{ discovered: DiscoveredAfterAuthorization[] }>;
  /** A usable access token of `owner` (default the hub) for `url`, refreshed when it expires soon; undefined when never authorized. */
  accessToken(url: string, owner?: RemoteOwnerKey): Promise<string | undefined>;
  /** Revokes every owner's tokens at the authorization server (when it offers revocation) and forgets them. */
  revoke(url: string): Promise<{ forgotten: boolean; revoked: boolean; owners: number }>;
  /** Revokes one owner's tokens (when the server offers revocation) and forgets them: the admin UI's Disconnect. */
  disconnect(url: string, owner?: RemoteOwnerKey): Promise<{ forgotten: boolean; revoked: boolean }>;
  status(url: string, owner?: RemoteOwnerKey): Promise<RemoteAuthorizationStatus>;
  /** Whose authorization `url`'s calls carry: the hub's (default), each user's or each organisation's. */
  ownerKind(url: string): Promise<RemoteOwnerKind>;
  /** Sets whose authorization `url`'s calls carry (an admin's decision). */
  setOwnerKind(url: string, kind: RemoteOwnerKind): Promise<void>;
}

/** Options of `createRemoteOAuth`. */
export interface RemoteOAuthOptions {
  db: Database;
  secrets: SecretBox;
  now?: () => number;
  refreshMarginMs?: number;
  /** The fetch of each server's OAuth requests; default the SSRF guard admitting public addresses only (network-guard.ts). */
  fetchFor?: GuardedFetchFactory;
  /**
   * Quiver's Client ID Metadata Document (client-metadata.ts): its URL is the client_id where the
   * server supports it, for authorizations redirected to a URI the document lists (the admin
   * UI's callback; a CLI's loopback port is not listed, so that flow registers); absent: DCR.
   */
  clientMetadata?: { url: string; redirectUris: readonly string[] } | undefined;
  /** Runs after an authorization is stored (the plugins waiting for it are discovered); its failures are reported, not thrown. */
  onAuthorized?: (url: string, owner: RemoteOwnerKey) => Promise<DiscoveredAfterAuthorization[]>;
}

/** The message that says how to connect a remote server. */
export function connectHint(url: string, owner: RemoteOwnerKey = HUB_OWNER): string {
  const flag = owner.kind === 'user' ? ` --user ${owner.id}` : owner.kind === 'organisation' ? ` --org ${owner.id}` : '';
  const who = owner.kind === 'hub' ? '' : ` (an admin runs it and hands the printed sign-in link to ${owner.kind === 'user' ? `user '${owner.id}'` : `a member of organisation '${owner.id}'`}, who signs in with their own account at the server)`;
  return `authorize it with 'quiver plugin authorize ${url}${flag}' (opens the server's sign-in in a browser)${who}`;
}

function sealContext(url: string, owner: RemoteOwnerKey): string {
  // The hub's context is the one before owners existed, so its stored rows stay readable.
  return owner.kind === 'hub' ? `quiver/remote-oauth/${url}` : `quiver/remote-oauth/${url}#${ownerLabel(owner)}`;
}

/** A checked owner: an id for a user or organisation, none for the hub. */
function checkedOwner(owner: RemoteOwnerKey | undefined): RemoteOwnerKey {
  if (owner === undefined || owner.kind === 'hub') return HUB_OWNER;
  if (!REMOTE_OWNER_KINDS.includes(owner.kind)) throw invalidInput(`owner kind must be one of ${REMOTE_OWNER_KINDS.join(', ')}`);
  if (typeof owner.id !== 'string' || owner.id.length === 0 || owner.id.length > 512) throw invalidInput(`a ${owner.kind} authorization needs the ${owner.kind}'s id (1-512 characters)`);
  return { kind: owner.kind, id: owner.id };
}

function normalisedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidInput(`'${url}' is not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw invalidInput(`'${url}' is not an http(s) URL`);
  parsed.hash = '';
  return parsed.href;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Tolerates one trailing '/' (the SDK's `String(URL)` adds one a metadata document may not carry). */
function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/$/, '') === b.replace(/\/$/, '');
}

/**
 * Checks what discovery found before anything is registered or opened (the SDK does not):
 * RFC 8414 §3.3, the metadata's `issuer` is the identifier it was discovered from (else a
 * server could speak for another); the authorization endpoint, which an admin's browser will
 * open, is an http(s) URL.
 */
function checkDiscovery(discovery: OAuthDiscoveryState): void {
  const metadata = discovery.authorizationServerMetadata;
  if (metadata === undefined) return;
  const expected = String(discovery.authorizationServerUrl);
  if (typeof metadata.issuer !== 'string' || !sameIssuer(metadata.issuer, expected)) {
    throw new QuiverError(ErrorCodes.upstreamError, `the authorization server metadata discovered at ${expected} names issuer '${String(metadata.issuer).slice(0, 200)}': it must be that same URL (RFC 8414 §3.3); refused`);
  }
  const endpoint = new URL(metadata.authorization_endpoint);
  if (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') throw new QuiverError(ErrorCodes.upstreamError, `the authorization endpoint of ${expected} is not an http(s) URL; refused`);
}

/** The SDK's view of one server's stored state; `interactive` false refuses to start a browser flow. */
class StoredStateProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  constructor(
    readonly stored: StoredState,
    readonly interactive: boolean,
    readonly now: () => number,
    readonly url: string,
    readonly owner: RemoteOwnerKey = HUB_OWNER,
    /** Read by the SDK: used as client_id where the server advertises client_id_metadata_document_supported. */
    readonly clientMetadataUrl?: string,
  ) {}
  get redirectUrl(): string | undefined {
    return this.stored.redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Quiver',
      redirect_uris: this.stored.redirectUri ? [this.stored.redirectUri] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    return this.stored.pending?.state ?? '';
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.stored.client as OAuthClientInformationMixed | undefined;
  }
  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.stored.client = { ...information };
  }
  tokens(): OAuthTokens | undefined {
    return this.stored.tokens as OAuthTokens | undefined;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.stored.tokens = { ...tokens };
    this.stored.expiresAt = tokens.expires_in === undefined ? undefined : this.now() + tokens.expires_in * 1000;
  }
  redirectToAuthorization(authorizationUrl: URL): void {
    if (!this.interactive) throw new QuiverError(ErrorCodes.missingCredential, `the remote MCP server ${this.url} needs a new authorization: ${connectHint(this.url, this.owner)}`);
    this.authorizationUrl = authorizationUrl;
  }
  saveCodeVerifier(codeVerifier: string): void {
    if (this.stored.pending) this.stored.pending.codeVerifier = codeVerifier;
  }
  codeVerifier(): string {
    return this.stored.pending?.codeVerifier ?? '';
  }
  saveDiscoveryState(discovery: OAuthDiscoveryState): void {
    checkDiscovery(discovery);
    this.stored.discovery = JSON.parse(JSON.stringify(discovery)) as Record<string, unknown>;
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.stored.discovery as OAuthDiscoveryState | undefined;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') delete this.stored.client;
    if (scope === 'all' || scope === 'tokens') {
      delete this.stored.tokens;
      delete this.stored.expiresAt;
    }
    if ((scope === 'all' || scope === 'verifier') && this.stored.pending) this.stored.pending.codeVerifier = '';
    if (scope === 'all' || scope === 'discovery') delete this.stored.discovery;
  }
}

/** Creates the remote OAuth client service. */
export function createRemoteOAuth(options: RemoteOAuthOptions): RemoteOAuth {
  const { db, secrets } = options;
  const now = options.now ?? Date.now;
  const margin = options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
  const fetchFor = options.fetchFor ?? createGuardedFetch(parseOAuthNetworkPolicy(undefined));
  const refreshing = new Map<string, Promise<string | undefined>>();

  async function load(url: string, owner: RemoteOwnerKey = HUB_OWNER): Promise<StoredState> {
    const sealed = await findRemoteOAuth(db, url, owner);
    if (!sealed) return {};
    const parsed = stateSchema.safeParse(JSON.parse(secrets.open(sealed, sealContext(url, owner))) as unknown);
    if (!parsed.success) throw new QuiverError(ErrorCodes.secretUnreadable, `the stored authorization of ${url} is unreadable; ${connectHint(url, owner)}`);
    return parsed.data;
  }

  async function save(url: string, state: StoredState, owner: RemoteOwnerKey = HUB_OWNER): Promise<void> {
    await upsertRemoteOAuth(db, url, secrets.seal(JSON.stringify(state), sealContext(url, owner)), new Date(now()), owner);
  }

  async function refreshed(url: string, owner: RemoteOwnerKey): Promise<string | undefined> {
    const state = await load(url, owner);
    const tokens = state.tokens as OAuthTokens | undefined;
    if (!tokens) return undefined;
    if (state.expiresAt === undefined || state.expiresAt - now() > margin) return tokens.access_token;
    const whose = owner.kind === 'hub' ? '' : ` for ${owner.kind} '${owner.id}'`;
    if (!tokens.refresh_token) throw new QuiverError(ErrorCodes.missingCredential, `the authorization of the remote MCP server ${url}${whose} has expired and cannot be refreshed: ${connectHint(url, owner)}`);
    const provider = new StoredStateProvider(state, false, now, url, owner);
    const result = await auth(provider, { serverUrl: url, fetchFn: fetchFor(url) });
    await save(url, state, owner);
    const fresh = state.tokens as OAuthTokens | undefined;
    if (result !== 'AUTHORIZED' || !fresh) throw new QuiverError(ErrorCodes.missingCredential, `the remote MCP server ${url} refused to refresh its authorization${whose}: ${connectHint(url, owner)}`);
    return fresh.access_token;
  }

  /** Revokes one owner's tokens (RFC 7009) when the server offers revocation, and forgets them. */
  async function revokeOwner(url: string, owner: RemoteOwnerKey): Promise<{ forgotten: boolean; revoked: boolean }> {
    // An unreadable row (another key, tampered) cannot be revoked, but is still forgotten: one
    // owner's broken state must not keep every other owner's grant alive on removal.
    const state = await load(url, owner).catch((): StoredState => ({}));
    const tokens = state.tokens as OAuthTokens | undefined;
    const metadata = (state.discovery as { authorizationServerMetadata?: { revocation_endpoint?: unknown } } | undefined)?.authorizationServerMetadata;
    const clientId = (state.client as { client_id?: unknown } | undefined)?.client_id;
    let revoked = false;
    if (tokens && typeof metadata?.revocation_endpoint === 'string' && typeof clientId === 'string') {
      // RFC 7009 §2.1: revoking the refresh token ends the grant; the access token too where supported.
      const all = await Promise.all(
        [
          ['refresh_token', tokens.refresh_token],
          ['access_token', tokens.access_token],
        ]
          .filter((pair): pair is [string, string] => typeof pair[1] === 'string')
          .map(([hint, token]) =>
            fetchFor(url)(metadata.revocation_endpoint as string, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ token, token_type_hint: hint, client_id: clientId }),
              signal: AbortSignal.timeout(15_000),
            }).then((response) => response.ok, () => false),
          ),
      );
      // The grant ends with its refresh token; a server may refuse to revoke a self-contained
      // (JWT) access token (unsupported_token_type, RFC 7009 §2.2.1), which then just expires.
      revoked = all[0] === true;
    }
    return { forgotten: await deleteRemoteOAuth(db, url, owner), revoked };
  }

  return {
    async begin(rawUrl, redirectUri, rawOwner) {
      const url = normalisedUrl(rawUrl);
      const owner = checkedOwner(rawOwner);
      const state = await load(url, owner);
      // A client registered for another redirect URI registers again: redirect URIs match exactly.
      const client = state.client as { redirect_uris?: unknown } | undefined;
      if (client && !(Array.isArray(client.redirect_uris) && client.redirect_uris.includes(redirectUri))) delete state.client;
      // The SDK would refresh rather than start while tokens exist; they are set aside, not
      // dropped: a started but never finished authorization must not disconnect a working one.
      const kept = { tokens: state.tokens, expiresAt: state.expiresAt, clientId: (state.client as { client_id?: unknown } | undefined)?.client_id };
      delete state.tokens;
      delete state.expiresAt;
      state.redirectUri = redirectUri;
      state.pending = { state: randomBytes(32).toString('base64url'), codeVerifier: '', startedAt: now() };
      const documentUrl = options.clientMetadata?.redirectUris.includes(redirectUri) ? options.clientMetadata.url : undefined;
      const provider = new StoredStateProvider(state, true, now, url, owner, documentUrl);
      const result = await auth(provider, { serverUrl: url, fetchFn: fetchFor(url) });
      if (result !== 'REDIRECT' || !provider.authorizationUrl) throw new QuiverError(ErrorCodes.upstreamError, `the authorization server of ${url} did not start an authorization`);
      // Kept only for the same client: tokens of a replaced registration could not be refreshed.
      if (kept.tokens !== undefined && kept.clientId !== undefined && (state.client as { client_id?: unknown } | undefined)?.client_id === kept.clientId) {
        state.tokens = kept.tokens;
        if (kept.expiresAt !== undefined) state.expiresAt = kept.expiresAt;
      }
      await save(url, state, owner);
      return { authorizationUrl: provider.authorizationUrl };
    },

    async complete(rawUrl, callback, rawOwner) {
      const url = normalisedUrl(rawUrl);
      const owner = checkedOwner(rawOwner);
      const state = await load(url, owner);
      const pending = state.pending;
      if (!pending || now() - pending.startedAt > PENDING_AUTHORIZATION_MS) throw invalidInput(`no authorization of ${url} is pending (or it is older than 10 minutes): start again`);
      const returned = callback.get('state');
      if (returned === null || !sameText(returned, pending.state)) throw invalidInput('the authorization callback does not carry the state Quiver sent: refused (possible forgery)');
      // RFC 9207: a response naming another issuer than the one discovered is a mix-up attack.
      const metadata = (state.discovery as { authorizationServerMetadata?: { issuer?: unknown; authorization_response_iss_parameter_supported?: unknown } } | undefined)?.authorizationServerMetadata;
      const iss = callback.get('iss');
      if (iss !== null && typeof metadata?.issuer === 'string' && iss !== metadata.issuer) throw invalidInput(`the authorization response comes from issuer '${iss.slice(0, 200)}', not '${metadata.issuer}': refused`);
      // RFC 9207 §2.4: a server that says it sends `iss` must send it.
      if (iss === null && metadata?.authorization_response_iss_parameter_supported === true) throw invalidInput('the authorization response lacks the iss its server promises (RFC 9207): refused');
      const error = callback.get('error');
      if (error !== null) {
        delete state.pending;
        await save(url, state, owner);
        throw invalidInput(`the authorization server refused: ${error.slice(0, 100)}`);
      }
      const code = callback.get('code');
      if (!code) throw invalidInput('the authorization callback carries no code');
      const provider = new StoredStateProvider(state, false, now, url, owner);
      const result = await auth(provider, { serverUrl: url, authorizationCode: code, fetchFn: fetchFor(url) });
      if (result !== 'AUTHORIZED') throw new QuiverError(ErrorCodes.upstreamError, `the authorization server of ${url} did not issue tokens`);
      delete state.pending;
      await save(url, state, owner);
      return { discovered: (await options.onAuthorized?.(url, owner)) ?? [] };
    },

    async accessToken(rawUrl, rawOwner) {
      const url = normalisedUrl(rawUrl);
      const owner = checkedOwner(rawOwner);
      // One refresh at a time per server and owner (a refresh token rotates: two would race).
      const key = `${ownerLabel(owner)} ${url}`;
      let running = refreshing.get(key);
      if (!running) {
        running = refreshed(url, owner).finally(() => refreshing.delete(key));
        refreshing.set(key, running);
      }
      return running;
    },

    async revoke(rawUrl) {
      const url = normalisedUrl(rawUrl);
      // Every owner's grant ends with the plugin: the hub's, each user's and each organisation's.
      const owners = await listRemoteOAuthOwners(db, url);
      const results = await Promise.all(owners.map((owner) => revokeOwner(url, owner)));
      return { forgotten: results.some((result) => result.forgotten), revoked: results.length > 0 && results.every((result) => result.revoked), owners: owners.length };
    },

    disconnect: (rawUrl, rawOwner) => revokeOwner(normalisedUrl(rawUrl), checkedOwner(rawOwner)),

    async status(rawUrl, rawOwner) {
      const state = await load(normalisedUrl(rawUrl), checkedOwner(rawOwner));
      const tokens = state.tokens as OAuthTokens | undefined;
      return {
        authorized: tokens !== undefined,
        expiresAt: state.expiresAt === undefined ? undefined : new Date(state.expiresAt),
        refreshable: typeof tokens?.refresh_token === 'string',
        pending: state.pending !== undefined,
      };
    },

    ownerKind: (rawUrl) => findRemoteOwnerKind(db, normalisedUrl(rawUrl)),

    async setOwnerKind(rawUrl, kind) {
      if (!REMOTE_OWNER_KINDS.includes(kind)) throw invalidInput(`--per must be one of ${REMOTE_OWNER_KINDS.join(', ')}, got '${String(kind)}'`);
      await setRemoteOwnerKind(db, normalisedUrl(rawUrl), kind, new Date(now()));
    },
  };
}
