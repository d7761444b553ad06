/**
 * @module openapi/address-guard
 * An OpenAPI plugin must not become a way into the hub's own network (issue #23): its base URL
 * comes from a document anyone can write, so a `servers` entry of `http://127.0.0.1:5432`, a
 * private address, the cloud metadata address or a name resolving to one of them would turn the
 * plugin into a proxy to internal services. Every request it sends therefore goes through
 * `createGuardedFetch`:
 *
 * - the host is resolved once, every address it resolves to is classified, and the request is
 *   refused when any of them is loopback, private (RFC 1918, ULA fc00::/7), link-local
 *   (169.254.0.0/16 with 169.254.169.254, fe80::/10), unspecified, shared CGNAT (100.64.0.0/10),
 *   multicast or broadcast, or is one of this machine's own interface addresses (the hub listens
 *   on those);
 * - the connection goes to the address that was checked (the socket's `lookup` hands back that
 *   address): a name cannot resolve to a public address for the check and to loopback for the
 *   connection (DNS rebinding). Host header and TLS SNI stay the name;
 * - redirects are not followed here (`execute.ts` follows same-origin ones by hand, each hop
 *   through this fetch again, so each is checked again).
 *
 * An admin may allow one exact destination (`quiver plugin allow NAME HOST:PORT`, recorded with
 * who and why): a request to that host and port is then sent wherever it resolves.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Readable } from 'node:stream';
import { ErrorCodes, QuiverError } from '../core/errors.ts';
import { internalAddressKind } from '../core/internal-address.ts';

/** A destination an admin allowed an OpenAPI plugin to reach although it is internal. */
export interface AllowedTarget {
  host: string;
  port: number;
}

/** One address of a name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Options of the guard. */
export interface AddressGuardOptions {
  /** The plugin's name, for messages (how to allow). */
  pluginName?: string;
  /** Destinations an admin allowed (exact host and port). */
  allow?: readonly AllowedTarget[];
  /** Resolves a name to all its addresses (default: the system resolver). Tests inject one. */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** This machine's own addresses (default: every interface address). */
  ownAddresses?: () => ReadonlySet<string>;
  /** Addresses treated as public although they are not: tests only (there is no internet here). */
  treatAsPublic?: readonly string[];
}

/** Raised before any connection is made when the destination is internal. */
export class InternalAddressError extends QuiverError {
  constructor(
    message: string,
    readonly address: string,
    readonly addressKind: string,
  ) {
    super(ErrorCodes.forbidden, message, { details: { address, kind: addressKind } });
  }
}

/** Every address of this machine's interfaces (the hub listens on them). */
export function machineAddresses(): ReadonlySet<string> {
  const found = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) found.add(entry.address.toLowerCase().split('%')[0]!);
  return found;
}

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
}

function defaultPort(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

function bare(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** True when an admin allowed this URL's exact host and port. */
export function isAllowedTarget(url: URL, allow: readonly AllowedTarget[]): boolean {
  const host = bare(url.hostname);
  const port = defaultPort(url);
  return allow.some((rule) => bare(rule.host) === host && rule.port === port);
}

function refusal(url: URL, address: string, kind: string, pluginName: string | undefined): InternalAddressError {
  const host = bare(url.hostname);
  const target = `${host.includes(':') ? `[${host}]` : host}:${defaultPort(url)}`;
  const via = host === address ? '' : ` (${host} resolves to ${address})`;
  const how = `an admin who means it can allow this exact destination: quiver plugin allow ${pluginName ?? 'PLUGIN'} ${target} --reason WHY`;
  return new InternalAddressError(`refused: ${url.origin}${via} is ${address}, a ${kind} address; an OpenAPI plugin may not reach loopback, private, link-local or the hub's own addresses; ${how}`, address, kind);
}

/**
 * Resolves the URL's host once and checks every address; returns the address to connect to
 * (the first), or throws `InternalAddressError` naming the address and how to allow it.
 */
export async function checkDestination(url: URL, options: AddressGuardOptions = {}): Promise<ResolvedAddress> {
  const host = bare(url.hostname);
  const family = isIP(host);
  let addresses: ResolvedAddress[];
  if (family !== 0) addresses = [{ address: host, family: family === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await (options.resolve ?? systemResolve)(host);
    } catch (error) {
      throw new QuiverError(ErrorCodes.unavailable, `cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (addresses.length === 0) throw new QuiverError(ErrorCodes.unavailable, `cannot resolve ${host}: no address`);
  }
  if (isAllowedTarget(url, options.allow ?? [])) return addresses[0]!;
  const publicForTests = new Set(options.treatAsPublic ?? []);
  const own = (options.ownAddresses ?? machineAddresses)();
  // Every answer is checked, not only the first: a name with one public and one internal answer
  // could be connected to either.
  for (const { address } of addresses) {
    if (publicForTests.has(address)) continue;
    const kind = internalAddressKind(address) ?? (own.has(address.toLowerCase()) ? "this machine's own (the hub's)" : undefined);
    if (kind !== undefined) throw refusal(url, address, kind, options.pluginName);
  }
  return addresses[0]!;
}

/** A request body as bytes and the content type it implies (a FormData body gets its boundary). */
async function bodyBytes(body: RequestInit['body'], headers: Headers): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  const encoded = new Request('http://body.invalid/', { method: 'POST', body });
  const type = encoded.headers.get('content-type');
  if (type !== null && !headers.has('content-type')) headers.set('content-type', type);
  return Buffer.from(await encoded.arrayBuffer());
}

function headerObject(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => (out[name] = value));
  return out;
}

const nullBodyStatuses = new Set([101, 204, 205, 304]);

function toResponse(message: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const status = message.statusCode ?? 502;
  const empty = method === 'HEAD' || nullBodyStatuses.has(status);
  if (empty) message.resume();
  const body = empty ? null : (Readable.toWeb(message) as ReadableStream<Uint8Array>);
  return new Response(body, { status: status < 200 || status > 599 ? 502 : status, statusText: message.statusMessage ?? '', headers });
}

/**
 * A `fetch` for OpenAPI plugins: refuses internal destinations before connecting, connects to
 * the address it checked, never follows redirects (the caller does, through this fetch again).
 */
export function createGuardedFetch(options: AddressGuardOptions = {}): typeof fetch {
  const guarded = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new QuiverError(ErrorCodes.invalidInput, `refused: ${url.protocol} is not http(s)`);
    const target = await checkDestination(url, options);
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    const body = await bodyBytes(init.body, headers);
    if (body !== undefined) headers.set('content-length', String(body.length));
    // The socket connects to the checked address, whatever the resolver would answer now.
    const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
      if ((lookupOptions as { all?: boolean }).all) (callback as unknown as (error: null, list: ResolvedAddress[]) => void)(null, [target]);
      else callback(null, target.address, target.family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Response>((resolve, reject) => {
      const request = send(url, { method, headers: headerObject(headers), lookup: pinned, agent: false, ...(init.signal ? { signal: init.signal } : {}) }, (message) => {
        resolve(toResponse(message, method));
      });
      request.on('error', reject);
      request.end(body);
    });
  };
  return guarded as typeof fetch;
}
