import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The counter a client address counts against. An IPv4 address is its own counter. An IPv6
 * client is usually given a whole /64 (and may pick any address in it), so IPv6 addresses count
 * by their first `ipv6PrefixLength` bits, written in one canonical form whatever spelling they
 * came in. An IPv4 address mapped into IPv6 (::ffff:192.0.2.1) is that IPv4 address.
 * Anything that is not an address (a garbled X-Forwarded-For) is its own counter, as it is.
 */
export function rateLimitKey(address: string, ipv6PrefixLength: number): string {
  // Node's own checks are strict: ipaddr.js would also take classful forms such as "10.1".
  if (!isIPv4(address) && !isIPv6(address.split('%')[0]!)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const mask = ipaddr.IPv6.subnetMaskFromPrefixLength(ipv6PrefixLength).toByteArray();
  const network = new ipaddr.IPv6(parsed.toByteArray().map((byte, index) => byte & mask[index]!));
  return `${network.toNormalizedString()}/${ipv6PrefixLength}`;
}
