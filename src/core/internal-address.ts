/**
 * @module core/internal-address
 * Which addresses and names point inside (issue #23): loopback, private (RFC 1918, ULA),
 * link-local (with the cloud metadata address 169.254.169.254), unspecified, shared CGNAT,
 * multicast and reserved ranges, IPv4-mapped and NAT64 forms included; and the host names that
 * only ever mean this machine or its local network. Pure: the OpenAPI address guard refuses
 * such destinations and dynamic trust weighs a plugin's attempts to reach them.
 */
import { isIP } from 'node:net';

function ipv4Number(address: string): number {
  return address.split('.').reduce((total, part) => total * 256 + Number(part), 0);
}

const ipv4Ranges: ReadonlyArray<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private (RFC 1918)'],
  ['100.64.0.0', 10, 'shared address space (CGNAT, RFC 6598)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata lives at 169.254.169.254)'],
  ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.168.0.0', 16, 'private (RFC 1918)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved or broadcast'],
];

function classifyIpv4(address: string): string | undefined {
  const value = ipv4Number(address);
  for (const [base, bits, kind] of ipv4Ranges) {
    const size = 2 ** (32 - bits);
    const start = ipv4Number(base);
    if (value >= start && value < start + size) return kind;
  }
  return undefined;
}

/** The 8 groups of an IPv6 address as numbers (an embedded IPv4 tail becomes two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const value = ipv4Number(v4[1]!);
    text = `${text.slice(0, -v4[1]!.length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':').filter((g) => g !== '') : [];
  const tailGroups = tail ? tail.split(':').filter((g) => g !== '') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  return [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups].map((g) => parseInt(g, 16));
}

function classifyIpv6(address: string): string | undefined {
  const groups = ipv6Groups(address);
  const [first] = groups;
  if (groups.every((g) => g === 0)) return 'unspecified';
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return 'loopback';
  // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64) reach the IPv4 address inside.
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (mapped || nat64) return classifyIpv4(`${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`);
  if ((first! & 0xfe00) === 0xfc00) return 'private (unique local, fc00::/7)';
  if ((first! & 0xffc0) === 0xfe80) return 'link-local (fe80::/10)';
  if ((first! & 0xff00) === 0xff00) return 'multicast';
  return undefined;
}

/** What kind of internal address `address` is (loopback, private, link-local…); undefined for a public one. */
export function internalAddressKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) return classifyIpv4(address);
  if (family === 6) return classifyIpv6(address);
  return 'not an IP address';
}


const internalNameSuffixes = ['.localhost', '.internal', '.local', '.lan', '.home.arpa', '.intranet', '.corp'];

/** What kind of internal destination `host` (an address or a name) is; undefined when it looks public. */
export function internalHostKind(host: string): string | undefined {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  if (isIP(bare) !== 0) return internalAddressKind(bare);
  if (bare === 'localhost') return 'loopback';
  if (!bare.includes('.')) return 'a local (single-label) name';
  return internalNameSuffixes.some((suffix) => bare.endsWith(suffix)) ? 'a local network name' : undefined;
}
