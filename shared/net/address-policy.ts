import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses the service may open a connection to on a user's behalf (media links, webhook
 * targets). Only globally routable unicast passes: ipaddr.js classifies every special-purpose block
 * (loopback, RFC 1918, link-local, CGNAT, multicast, unspecified, unique-local, reserved, 6to4/Teredo/
 * NAT64 which can embed a private IPv4...) as something other than `unicast`.
 */

/** Cloud instance-metadata endpoints: refused even when private targets are allowed (local mode). */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack
  '169.254.170.2', // ECS task metadata
  '100.100.100.200', // Alibaba Cloud
  'fd00:ec2::254', // AWS IMDS over IPv6
]);

/**
 * Writes an IPv6 literal's trailing dotted quad as two hex groups. ipaddr.js reads `::a.b.c.d` (IPv4-compatible)
 * as if it were `::ffff:a.b.c.d` (IPv4-mapped), which would hide the former from the range check below.
 */
function hexTail(text: string): string {
  const tail = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (!tail || !ipaddr.IPv4.isValidFourPartDecimal(tail[2])) return text;
  const [a, b, c, d] = ipaddr.IPv4.parse(tail[2]).toByteArray();
  return `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * IPv4-compatible IPv6 (`::/96`, deprecated by RFC 4291): ipaddr.js calls it `unicast`, yet `[::a9fe:a9fe]` may
 * reach 169.254.169.254 through a stack that still honours it. The whole block is refused; `::` and `::1` keep
 * their own ranges (unspecified, loopback).
 */
const isIpv4Compatible = (ip: ipaddr.IPv6) => ip.parts.slice(0, 6).every((p) => p === 0) && (ip.parts[6] !== 0 || ip.parts[7] > 1);

/**
 * The IPv4 addresses an IPv6 one carries to a translator or tunnel: NAT64 (`64:ff9b::/96`, RFC 6052, and the local-use
 * `64:ff9b:1::/48`, RFC 8215) in its last 32 bits, 6to4 (`2002::/16`) in bits 16-47, Teredo (`2001::/32`) its client,
 * inverted, in its last 32 bits. Local mode allows those ranges (they are private), but never to reach metadata.
 */
function embeddedIpv4(ip: ipaddr.IPv6): string[] {
  const [p0, p1, p2, , , , p6, p7] = ip.parts;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  if (p0 === 0x64 && p1 === 0xff9b) return [v4(p6, p7)];
  if (p0 === 0x2002) return [v4(p1, p2)];
  if (p0 === 0x2001 && p1 === 0) return [v4(~p6 & 0xffff, ~p7 & 0xffff)];
  return [];
}

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Decide on one literal address; unparsable input is refused. */
export function checkAddress(address: string, allowPrivate: boolean): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(hexTail(address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')));
  } catch {
    return { allowed: false, reason: `not an IP address: ${address}` };
  }
  // ::ffff:a.b.c.d reaches a.b.c.d: judge the IPv4 inside.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const normalized = parsed.toString();
  if (parsed.kind() === 'ipv6' && isIpv4Compatible(parsed as ipaddr.IPv6)) return { allowed: false, reason: `IPv4-compatible address ${normalized}` };
  if (METADATA_ADDRESSES.has(normalized)) return { allowed: false, reason: `metadata address ${normalized}` };
  const carried = parsed.kind() === 'ipv6' ? embeddedIpv4(parsed as ipaddr.IPv6).find((v4) => METADATA_ADDRESSES.has(v4)) : undefined;
  if (carried) return { allowed: false, reason: `address ${normalized} carries the metadata address ${carried}` };
  const range = parsed.range();
  if (range === 'unicast') return { allowed: true };
  // Multicast and broadcast can never carry an HTTP connection; refuse them even in local mode.
  if (allowPrivate && range !== 'multicast' && range !== 'broadcast') return { allowed: true };
  return { allowed: false, reason: `${range} address ${normalized}` };
}

/** True when the string is an IP literal (a URL host in brackets counts). */
export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
}
