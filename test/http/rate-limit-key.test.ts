import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rateLimitKey } from '../../src/http/rate-limit-key.js';

/** Which counter a client address counts against: IPv4 as it is, IPv6 by its network prefix. */

const CASES: { why: string; address: string; prefix: number; key: string }[] = [
  { why: 'an IPv4 address is its own key', address: '192.0.2.7', prefix: 64, key: '192.0.2.7' },
  { why: 'IPv4 ignores the IPv6 prefix', address: '198.51.100.200', prefix: 32, key: '198.51.100.200' },
  { why: 'an IPv6 address counts by its /64', address: '2001:db8:1:2:3:4:5:6', prefix: 64, key: '2001:db8:1:2:0:0:0:0/64' },
  { why: 'another address in the same /64 has the same key', address: '2001:db8:1:2:ffff:ffff:ffff:ffff', prefix: 64, key: '2001:db8:1:2:0:0:0:0/64' },
  { why: 'the neighbouring /64 has another key', address: '2001:db8:1:3::1', prefix: 64, key: '2001:db8:1:3:0:0:0:0/64' },
  { why: 'any spelling of an address gives the same key', address: '2001:0DB8:0001:0002:0000::0001', prefix: 64, key: '2001:db8:1:2:0:0:0:0/64' },
  { why: 'a compressed run in the prefix is expanded', address: '2001:db8::1:2:3:4', prefix: 64, key: '2001:db8:0:0:0:0:0:0/64' },
  { why: 'a zone index is ignored', address: 'fe80::1%eth0', prefix: 64, key: 'fe80:0:0:0:0:0:0:0/64' },
  { why: 'a /56 cuts inside a group', address: '2001:db8:1:2345::1', prefix: 56, key: '2001:db8:1:2300:0:0:0:0/56' },
  { why: 'a /48 keeps three groups', address: '2001:db8:abcd:ef01::9', prefix: 48, key: '2001:db8:abcd:0:0:0:0:0/48' },
  { why: 'a /32 keeps two groups', address: '2001:db8:abcd:ef01::9', prefix: 32, key: '2001:db8:0:0:0:0:0:0/32' },
  { why: 'a /127 cuts inside the last group', address: '2001:db8::7', prefix: 127, key: '2001:db8:0:0:0:0:0:6/127' },
  { why: 'a /128 is the whole address', address: '2001:db8::7', prefix: 128, key: '2001:db8:0:0:0:0:0:7/128' },
  { why: 'the loopback address', address: '::1', prefix: 64, key: '0:0:0:0:0:0:0:0/64' },
  { why: 'the unspecified address', address: '::', prefix: 128, key: '0:0:0:0:0:0:0:0/128' },
  { why: 'an IPv4-mapped address is its IPv4 address', address: '::ffff:192.0.2.7', prefix: 64, key: '192.0.2.7' },
  { why: 'an IPv4-mapped address in hex is its IPv4 address', address: '::ffff:c000:207', prefix: 64, key: '192.0.2.7' },
  { why: 'an IPv4-mapped address written out in full is its IPv4 address', address: '0:0:0:0:0:FFFF:203.0.113.9', prefix: 128, key: '203.0.113.9' },
  { why: 'another IPv4-embedding prefix (NAT64) is IPv6', address: '64:ff9b::192.0.2.7', prefix: 96, key: '64:ff9b:0:0:0:0:0:0/96' },
  { why: 'NAT64 keeps its embedded IPv4 address at /128', address: '64:ff9b::192.0.2.7', prefix: 128, key: '64:ff9b:0:0:0:0:c000:207/128' },
  { why: 'something that is not an address stays as it is', address: 'unknown', prefix: 64, key: 'unknown' },
  { why: 'an address with a port is not an address', address: '[2001:db8::1]:443', prefix: 64, key: '[2001:db8::1]:443' },
];

describe('the rate-limit key of a client address', () => {
  for (const { why, address, prefix, key } of CASES) {
    test(`${why}: ${address} /${prefix} → ${key}`, () => {
      assert.equal(rateLimitKey(address, prefix), key);
    });
  }
});
