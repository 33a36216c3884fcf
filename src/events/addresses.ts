import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach (server-side request forgery): this machine, private
 * networks, link-local (with the cloud metadata service at 169.254.169.254), carrier-grade NAT,
 * unspecified, multicast, broadcast and documentation ranges, in IPv4 and IPv6; an IPv4-mapped
 * IPv6 address is judged as the IPv4 address it carries.
 */
const refused = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  refused.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  refused.addSubnet(net, bits, 'ipv6');

const MAPPED = /^::ffff:(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i;
const MAPPED_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** The IPv4 address an IPv4-mapped (or -translated) IPv6 address carries, or null. */
function embeddedV4(address: string): string | null {
  const dotted = MAPPED.exec(address);
  if (dotted) return dotted[1] as string;
  const hex = MAPPED_HEX.exec(address);
  if (!hex) return null;
  const hi = Number.parseInt(hex[1] as string, 16);
  const lo = Number.parseInt(hex[2] as string, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether a webhook may be sent to this IP address (false for anything not an IP address). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return !refused.check(address, 'ipv4');
  const v4 = embeddedV4(address);
  if (v4 !== null) return isIP(v4) === 4 && !refused.check(v4, 'ipv4');
  return !refused.check(address, 'ipv6');
}
