/**
 * @module core/address-list
 * A list of IP addresses an admin writes in one setting: comma-separated `loopback`, `private`,
 * `link-local`, IP addresses and CIDRs (`10.1.0.0/16`, `fd00::/8`). Used for the non-public
 * addresses remote plugins may reach (`QUIVER_REMOTE_ALLOW_ADDRESSES`) and for the proxies whose
 * `X-Forwarded-*` headers are believed (`QUIVER_TRUST_PROXY`). An IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`, also in hex) is matched as the IPv4 address it carries.
 */
import { BlockList, isIP } from 'node:net';
import { QuiverError, ErrorCodes } from './errors.ts';

export type AddressFamily = 'ipv4' | 'ipv6';
export type AddressRange = readonly [address: string, prefix: number, family: AddressFamily];

/** The ranges each keyword stands for. */
export const ADDRESS_KEYWORDS: Readonly<Record<string, readonly AddressRange[]>> = {
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  private: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['100.64.0.0', 10, 'ipv4'], ['fc00::', 7, 'ipv6']],
  'link-local': [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']],
};

/** A parsed list. */
export interface AddressList {
  /** The ranges as a BlockList (check an address with `unmapped` first, or use `has`). */
  readonly ranges: BlockList;
  /** True when some loopback address is in the list. */
  readonly loopbackAdmitted: boolean;
  /** True when the list names nothing. */
  readonly empty: boolean;
  /** True when `address` (any spelling, IPv4-mapped included) is in the list. */
  has(address: string): boolean;
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d, or ::ffff:a9fe:a9fe as URL parsing writes it) as the IPv4 address it carries. */
export function unmapped(address: string): { address: string; family: AddressFamily } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
    return { address: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, family: 'ipv4' };
  }
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** A BlockList of `ranges`. */
export function blockListOf(ranges: Iterable<AddressRange>): BlockList {
  const list = new BlockList();
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family);
  return list;
}

const loopback = blockListOf(ADDRESS_KEYWORDS['loopback']!);

/** True when `address` is a loopback address. */
export function isLoopbackAddress(address: string): boolean {
  const plain = unmapped(address);
  return isIP(plain.address) !== 0 && loopback.check(plain.address, plain.family);
}

/** Parses the admin's list; `setting` names it in the error of an entry that is none of the forms. Empty admits nothing. */
export function parseAddressList(text: string | undefined, setting: string): AddressList {
  const ranges = new BlockList();
  let loopbackAdmitted = false;
  let empty = true;
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    empty = false;
    const keyword = ADDRESS_KEYWORDS[entry];
    if (keyword) {
      for (const [address, prefix, family] of keyword) ranges.addSubnet(address, prefix, family);
      if (entry === 'loopback') loopbackAdmitted = true;
      continue;
    }
    const [address, prefixText, extra] = entry.split('/');
    const version = isIP(address ?? '');
    const prefix = prefixText === undefined ? (version === 6 ? 128 : 32) : Number(prefixText);
    if (version === 0 || extra !== undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > (version === 6 ? 128 : 32)) {
      throw new QuiverError(ErrorCodes.config, `${setting}: '${raw.trim()}' is not loopback, private, link-local, an IP address or a CIDR`);
    }
    ranges.addSubnet(address!, prefix, version === 6 ? 'ipv6' : 'ipv4');
    if (loopback.check(address!, version === 6 ? 'ipv6' : 'ipv4')) loopbackAdmitted = true;
  }
  return {
    ranges,
    loopbackAdmitted,
    empty,
    has(address) {
      const plain = unmapped(address.trim());
      return isIP(plain.address) !== 0 && ranges.check(plain.address, plain.family);
    },
  };
}
