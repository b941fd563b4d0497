import { isIPv4, isIPv6 } from 'node:net';

/**
 * The counter a client address counts against. An IPv4 address is its own counter. An IPv6
 * client is usually given a whole /64 (and may pick any address in it), so IPv6 addresses count
 * by their first `ipv6PrefixLength` bits, written in one canonical form whatever spelling they
 * came in. An IPv4 address mapped into IPv6 (::ffff:192.0.2.1) is that IPv4 address.
 * Anything that is not an address (a garbled X-Forwarded-For) is its own counter, as it is.
 */
export function rateLimitKey(address: string, ipv6PrefixLength: number): string {
  if (isIPv4(address)) return address;
  const withoutZone = address.split('%')[0]!;
  if (!isIPv6(withoutZone)) return address;
  const groups = ipv6Groups(withoutZone);
  if (isIPv4Mapped(groups)) return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  return `${keepLeadingBits(groups, ipv6PrefixLength).map((group) => group.toString(16)).join(':')}/${ipv6PrefixLength}`;
}

/** The eight 16-bit groups of a valid IPv6 address, `::` expanded and a trailing IPv4 part split in two. */
function ipv6Groups(address: string): number[] {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').flatMap(groupsOfPart) : []);
  const leading = parse(head);
  if (tail === undefined) return leading;
  const trailing = parse(tail);
  return [...leading, ...Array<number>(8 - leading.length - trailing.length).fill(0), ...trailing];
}

function groupsOfPart(part: string): number[] {
  if (!part.includes('.')) return [parseInt(part, 16)];
  const [a, b, c, d] = part.split('.').map(Number) as [number, number, number, number];
  return [(a << 8) | b, (c << 8) | d];
}

function isIPv4Mapped(groups: number[]): boolean {
  return groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
}

function keepLeadingBits(groups: number[], bits: number): number[] {
  return groups.map((group, index) => {
    const kept = Math.min(16, Math.max(0, bits - index * 16));
    return kept === 0 ? 0 : group & (0xffff << (16 - kept)) & 0xffff;
  });
}
