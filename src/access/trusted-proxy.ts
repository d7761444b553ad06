/**
 * @module access/trusted-proxy
 * Which `X-Forwarded-*` headers to believe (issue #27): only those a proxy the admin names in
 * `QUIVER_TRUST_PROXY` (`loopback`, `private`, IP addresses, CIDRs) added. Default none: the
 * headers are ignored and the connection's peer is the client. Behind trusted proxies the client
 * is the rightmost `X-Forwarded-For` entry that is not itself a trusted proxy (entries to its left
 * were written by the client and prove nothing), and the scheme and host the client used are the
 * first `X-Forwarded-Proto` / `X-Forwarded-Host` values.
 */
import { isIP } from 'node:net';
import { parseAddressList, unmapped } from '../core/address-list.ts';

export const TRUST_PROXY_SETTING = 'QUIVER_TRUST_PROXY';

/** The `X-Forwarded-*` headers this module reads (removed from requests of untrusted peers). */
export const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'forwarded'] as const;

/** Reads a request header by lower-case name. */
export type HeaderReader = (name: string) => string | undefined;

export interface ProxyTrust {
  /** True when some proxy is trusted. */
  readonly enabled: boolean;
  /** True when `peer` (the connection's remote address) is a trusted proxy. */
  trusts(peer: string | undefined): boolean;
  /** The client's address: the peer, or behind trusted proxies the rightmost untrusted `X-Forwarded-For` entry. */
  clientAddress(peer: string | undefined, header: HeaderReader): string;
  /** The origin the client used: from `X-Forwarded-Proto` / `-Host` behind a trusted proxy (when well-formed), else `fallback`. */
  origin(peer: string | undefined, header: HeaderReader, fallback: string): string;
}

const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

const first = (value: string | undefined) => value?.split(',')[0]?.trim().toLowerCase();

/** An address as written in X-Forwarded-For: bare, `[v6]:port` or `v4:port`, without the port. */
function plainAddress(entry: string): string {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return bracketed[1]!;
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(text);
  return withPort ? withPort[1]! : text;
}

/** The trust of `text` (the setting's value). */
export function createProxyTrust(text: string | undefined): ProxyTrust {
  const proxies = parseAddressList(text, TRUST_PROXY_SETTING);
  const trusts = (peer: string | undefined) => !proxies.empty && peer !== undefined && proxies.has(peer);
  return {
    enabled: !proxies.empty,
    trusts,
    clientAddress(peer, header) {
      const direct = peer === undefined ? 'unknown' : unmapped(peer).address;
      if (!trusts(peer)) return direct;
      const chain = (header('x-forwarded-for') ?? '').split(',').map(plainAddress).filter((entry) => isIP(entry) !== 0);
      for (let index = chain.length - 1; index >= 0; index--) {
        if (!proxies.has(chain[index]!)) return unmapped(chain[index]!).address;
      }
      // Every hop is a trusted proxy: the leftmost is as far as the chain goes.
      return chain.length > 0 ? unmapped(chain[0]!).address : direct;
    },
    origin(peer, header, fallback) {
      if (!trusts(peer)) return fallback;
      const base = new URL(fallback);
      const proto = first(header('x-forwarded-proto'));
      const host = first(header('x-forwarded-host'));
      const scheme = proto === 'https' || proto === 'http' ? proto : base.protocol.slice(0, -1);
      const authority = host !== undefined && HOST.test(host) ? host : base.host;
      return new URL(`${scheme}://${authority}`).origin;
    },
  };
}
