/**
 * @module plugins/oauth/network-guard
 * The SSRF guard on Quiver's requests to remote plugins (issue #27): the plugin's own MCP URL and
 * the OAuth requests made for it. A remote MCP server names its authorization server (the 401's
 * `resource_metadata`, the protected resource metadata's `authorization_servers`), and that
 * server's metadata names the token, registration and revocation endpoints: none of these were
 * chosen by the admin; and the plugin's own host name may resolve (or later re-resolve, DNS
 * rebinding) to an inside address. So none may lead Quiver to loopback, link-local (cloud
 * metadata, 169.254.169.254), private or other non-public addresses unless the admin admits them
 * (`QUIVER_REMOTE_ALLOW_ADDRESSES`, formerly `QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES`: `loopback`,
 * `private`, `link-local`, or CIDRs). Rules:
 * - the address is checked before the request (a clear refusal) and again on the connection
 *   itself (an undici Agent whose `lookup` refuses), so a DNS answer that changes between the
 *   two (rebinding) cannot slip through;
 * - redirects are followed by hand (at most 5), each target checked the same way;
 * - OAuth requests: https only; plain http only to a loopback address the admin admitted (local
 *   development); requests to the plugin's own origin keep its scheme (the admin chose it) but
 *   their addresses are checked all the same;
 * - the plugin's MCP URL (`createRemotePluginFetch`, `checkRemotePluginUrl`): http or https, its
 *   addresses checked as above, at install and on every connection.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type BlockList } from 'node:net';
import type { Agent } from 'undici';
import { QuiverError, ErrorCodes } from '../../core/errors.ts';
import { ADDRESS_KEYWORDS, blockListOf, parseAddressList, unmapped, type AddressRange } from '../../core/address-list.ts';

/** The setting that admits non-public addresses (the older name is still read). */
export const ALLOW_ADDRESSES_SETTING = 'QUIVER_REMOTE_ALLOW_ADDRESSES';

/** Which non-public addresses the admin admits for remote plugins and their OAuth requests. */
export interface OAuthNetworkPolicy {
  readonly allowed: BlockList;
  /** True when some loopback address is admitted (plain http is allowed to those only). */
  readonly loopbackAdmitted: boolean;
}

const MAX_REDIRECTS = 5;

/**
 * undici (about 110 CommonJS files) loads on the first guarded request, not with this module
 * (issue #28): the app, `quiver --help` and every forwarded CLI command import the guard, and
 * most runs of them never reach a remote plugin. Loading it was ~0.4 s of a start.
 */
type ConnectionGuard = () => Promise<{ agent: Agent; fetch: typeof import('undici').fetch }>;

/** An undici Agent whose connections check their addresses (made, with undici, on first use). */
function lazyGuardedAgent(policy: OAuthNetworkPolicy, resolver: Resolver): ConnectionGuard {
  let made: ReturnType<ConnectionGuard> | undefined;
  return () =>
    (made ??= import('undici').then(({ Agent, fetch }) => ({ agent: new Agent({ connect: { lookup: guardedLookup(policy, resolver) as never } }), fetch })));
}

/** The address ranges that are not the public internet (IANA special-purpose registries). */
const NON_PUBLIC: readonly AddressRange[] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001::', 23, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

const nonPublic = blockListOf(NON_PUBLIC);
const loopback = blockListOf(ADDRESS_KEYWORDS['loopback']!);

/**
 * Parses the admin's setting: comma-separated `loopback`, `private`, `link-local`, IP addresses
 * and CIDRs (`10.1.0.0/16`, `fd00::/8`). Empty admits nothing.
 */
export function parseOAuthNetworkPolicy(text: string | undefined): OAuthNetworkPolicy {
  const list = parseAddressList(text, ALLOW_ADDRESSES_SETTING);
  return { allowed: list.ranges, loopbackAdmitted: list.loopbackAdmitted };
}

/** Why `address` may not be reached, or undefined when it may. */
export function addressRefusal(address: string, policy: OAuthNetworkPolicy): string | undefined {
  const { address: plain, family } = unmapped(address);
  if (!nonPublic.check(plain, family)) return undefined;
  if (policy.allowed.check(plain, family)) return undefined;
  const kind = loopback.check(plain, family) ? 'a loopback' : plain.startsWith('169.254.') || /^fe[89ab]/i.test(plain) ? 'a link-local (cloud metadata)' : 'a private or reserved';
  return `${plain} is ${kind} address; admit it with ${ALLOW_ADDRESSES_SETTING} if that server is meant to be reached`;
}

/** What a refusal says about the request: an OAuth request, or a connection to the plugin itself. */
type Refuse = (url: URL, why: string) => QuiverError;

function refused(url: URL, why: string): QuiverError {
  return new QuiverError(ErrorCodes.forbidden, `refused the OAuth request to ${url.origin}${url.pathname}: ${why}`, { kind: 'user', details: { reason: 'oauth_address_refused' } });
}

/** Reason code of a refused connection to a remote plugin's own URL. */
export const REMOTE_ADDRESS_REFUSED = 'remote_address_refused';

function refusedPlugin(url: URL, why: string): QuiverError {
  return new QuiverError(ErrorCodes.forbidden, `refused to connect to the remote plugin at ${url.origin}${url.pathname}: ${why}`, { kind: 'user', details: { reason: REMOTE_ADDRESS_REFUSED } });
}

/** Resolves a host name to all its addresses (the system resolver; tests pass their own to play a rebinding). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** The scheme is http(s) and every address the host resolves to is admitted; the addresses. */
async function admittedAddresses(url: URL, policy: OAuthNetworkPolicy, refuse: Refuse, resolver: Resolver): Promise<string[]> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse(url, `${url.protocol} is not https`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await resolver(host)).map((entry) => entry.address);
    } catch (error) {
      throw refuse(url, `its host does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
    }
  }
  for (const address of addresses) {
    const why = addressRefusal(address, policy);
    if (why !== undefined) throw refuse(url, why);
  }
  return addresses;
}

/** Checks a URL Quiver is about to request for OAuth: scheme, then every address its host resolves to. */
export async function checkOAuthUrl(url: URL, policy: OAuthNetworkPolicy, resolver: Resolver = systemResolver): Promise<void> {
  const addresses = await admittedAddresses(url, policy, refused, resolver);
  // Plain http only to an admitted loopback address: tokens never cross a network in the clear.
  if (url.protocol === 'http:' && !(policy.loopbackAdmitted && addresses.every((address) => loopback.check(unmapped(address).address, unmapped(address).family)))) {
    throw refused(url, `https is required (plain http only to a loopback address admitted with ${ALLOW_ADDRESSES_SETTING}=loopback)`);
  }
}

/** Checks a remote plugin's MCP URL (at install): http(s), and every address its host resolves to admitted. */
export async function checkRemotePluginUrl(url: URL, policy: OAuthNetworkPolicy, resolver: Resolver = systemResolver): Promise<void> {
  await admittedAddresses(url, policy, refusedPlugin, resolver);
}

const ADDRESS_REFUSED_CODE = 'EQUIVER_ADDRESS_REFUSED';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A connection-time lookup that refuses what `checkOAuthUrl` refuses (a second DNS answer may differ). */
function guardedLookup(policy: OAuthNetworkPolicy, resolver: Resolver) {
  return (hostname: string, options: { all?: boolean; family?: number } | number, callback: LookupCallback): void => {
    const all = typeof options === 'object' && options.all === true;
    resolver(hostname).then(
      (addresses) => {
        const bad = addresses.map((entry) => addressRefusal(entry.address, policy)).find((why) => why !== undefined);
        if (bad !== undefined || addresses.length === 0) {
          const error = Object.assign(new Error(bad ?? `${hostname} has no address`), { code: ADDRESS_REFUSED_CODE });
          callback(error, '', 0);
          return;
        }
        if (all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/** A fetch for the OAuth requests about the remote server at `serverUrl`. */
export type GuardedFetchFactory = (serverUrl: string) => typeof fetch;

/** Options of the guards: the resolver (default the system's). */
export interface GuardOptions {
  resolver?: Resolver;
}

/** The refusal inside a failed fetch whose connection's lookup refused the address (a rebinding), if it was that. */
function lookupRefusal(error: unknown): string | undefined {
  for (let cause = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; cause && depth < 5; cause = cause.cause as typeof cause, depth++) {
    if (cause.code === ADDRESS_REFUSED_CODE) return String(cause.message);
  }
  return undefined;
}

/**
 * The guarded request loop: each hop is checked (`check`), sent through the checking Agent, and
 * redirects are followed by hand. A refusal at connection time becomes `refuse`'s error.
 */
function guardedRequests(connection: ConnectionGuard, check: (url: URL) => Promise<void>, refuse: (url: URL) => Refuse): typeof fetch {
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    let method = (init?.method ?? 'GET').toUpperCase();
    let body = init?.body;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      await check(url);
      const request = { ...init, method, body, redirect: 'manual' as const };
      const { agent, fetch: undiciFetch } = await connection();
      let response: Response;
      try {
        response = (await undiciFetch(url, { ...(request as object), dispatcher: agent } as never)) as unknown as Response;
      } catch (error) {
        const why = lookupRefusal(error);
        if (why !== undefined) throw refuse(url)(url, why);
        throw error;
      }
      const location = response.headers.get('location');
      if (![301, 302, 303, 307, 308].includes(response.status) || location === null) return response;
      // A caller that follows redirects itself (the SDK within one origin) gets the redirect; its next request comes back here.
      if (init?.redirect === 'manual') return response;
      if (init?.redirect === 'error') throw refuse(url)(url, 'it redirects');
      await response.body?.cancel().catch(() => undefined);
      url = new URL(location, url);
      // A 303 (and a 301/302 after a POST, as browsers do) continues as a GET without a body.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
    throw refuse(url)(url, `more than ${MAX_REDIRECTS} redirects`);
  };
  return guarded as typeof fetch;
}

/**
 * Creates the OAuth guard: each server's requests go through the checked connection; those to
 * the plugin's own origin keep the scheme the admin chose, the others must be https.
 */
export function createGuardedFetch(policy: OAuthNetworkPolicy, options: GuardOptions = {}): GuardedFetchFactory {
  const resolver = options.resolver ?? systemResolver;
  const agent = lazyGuardedAgent(policy, resolver);
  return (serverUrl) => {
    const trustedOrigin = new URL(serverUrl).origin;
    const own = (url: URL) => url.origin === trustedOrigin;
    return guardedRequests(
      agent,
      (url) => (own(url) ? checkRemotePluginUrl(url, policy, resolver) : checkOAuthUrl(url, policy, resolver)),
      (url) => (own(url) ? refusedPlugin : refused),
    );
  };
}

/**
 * The fetch of a remote plugin's MCP connection: every request's host is checked before it is
 * sent and again when the connection is made (DNS rebinding), redirects each checked.
 */
export function createRemotePluginFetch(policy: OAuthNetworkPolicy, options: GuardOptions = {}): typeof fetch {
  const resolver = options.resolver ?? systemResolver;
  return guardedRequests(lazyGuardedAgent(policy, resolver), (url) => checkRemotePluginUrl(url, policy, resolver), () => refusedPlugin);
}
