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

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Decide on one literal address; unparsable input is refused. */
export function checkAddress(address: string, allowPrivate: boolean): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return { allowed: false, reason: `not an IP address: ${address}` };
  }
  // ::ffff:a.b.c.d reaches a.b.c.d: judge the IPv4 inside.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const normalized = parsed.toString();
  if (METADATA_ADDRESSES.has(normalized)) return { allowed: false, reason: `metadata address ${normalized}` };
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
