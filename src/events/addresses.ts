import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Addresses a webhook or a billing exporter may not reach (server-side request forgery): anything ipaddr.js does not
 * class as global unicast (this machine, private networks, link-local with the cloud metadata
 * service at 169.254.169.254, carrier-grade NAT, unspecified, multicast, broadcast, reserved and
 * documentation ranges), in IPv4 and IPv6. An IPv6 address that carries an IPv4 address, by
 * which a router or the kernel may reach that IPv4 address, is judged as every IPv4 address it
 * may carry: the ranges are kept by the library, the embeddings are listed here.
 */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast';
  const carried = embeddedV4(ip as ipaddr.IPv6);
  if (carried !== null) return carried.every((v4) => v4.range() === 'unicast');
  return ip.range() === 'unicast';
}

const v4 = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);

/**
 * The IPv4 addresses an IPv6 address may lead to, or null when it carries none:
 * - ::/96 (IPv4-compatible, deprecated; the URL parser writes `[::127.0.0.1]` as `[::7f00:1]`),
 *   ::ffff:0:0/96 (IPv4-mapped) and ::ffff:0:0:0/96 (IPv4-translated): the last 32 bits;
 * - 64:ff9b::/96 (NAT64): the last 32 bits; 64:ff9b:1::/48 (local NAT64): its operator picks
 *   the prefix length, so every RFC 6052 layout from /48 to /96;
 * - 2002::/16 (6to4): bits 16-47;
 * - 2001::/32 (Teredo): the server (bits 32-63) and the client (the last 32 bits, inverted);
 * - an ISATAP interface identifier (`0:5efe` or `200:5efe` in bits 64-95): the last 32 bits.
 */
function embeddedV4(ip: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = ip.parts;
  const last = v4(p[6] as number, p[7] as number);
  const range = ip.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return [last];
  if (p.slice(0, 6).every((x) => x === 0)) return [last];
  if (range === 'rfc6052') return p[2] === 1 ? localNat64(p) : [last];
  if (range === '6to4') return [v4(p[1] as number, p[2] as number)];
  if (range === 'teredo')
    return [v4(p[2] as number, p[3] as number), v4(~(p[6] as number) & 0xffff, ~(p[7] as number) & 0xffff)];
  if (p[5] === 0x5efe && ((p[4] as number) & 0xfdff) === 0) return [last];
  return null;
}

/** 64:ff9b:1::/48 with the IPv4 address at each RFC 6052 prefix length of /48 and longer. */
function localNat64(p: number[]): ipaddr.IPv4[] {
  const byte = (i: number): number => (i % 2 === 0 ? (p[i >> 1] as number) >> 8 : (p[i >> 1] as number) & 255);
  const at = (...bytes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(bytes.map(byte));
  return [
    at(6, 7, 9, 10), // /48
    at(7, 9, 10, 11), // /56
    at(9, 10, 11, 12), // /64
    at(10, 11, 12, 13), // /72
    at(11, 12, 13, 14), // /80
    at(12, 13, 14, 15), // /96
  ];
}

/** Why a URL is not reached: `unresolved` may pass (DNS comes back), the others stay until the config changes. */
export class RefusedAddress extends Error {
  constructor(
    message: string,
    readonly reason: 'scheme' | 'unresolved' | 'private',
  ) {
    super(message);
  }
}

export interface AddressPolicy {
  allowPrivate: boolean;
  allowHttp: boolean;
  /** The setting that `allowPrivate` comes from, named in a refusal. */
  privateSetting: string;
}

/** The operator's setting, which billing exporters follow too. */
export const OPERATOR_SETTING = 'webhooks.allow_private_addresses';

/** Who made a webhook endpoint: the operator (admin API, CLI) or a customer in the portal. */
export const ENDPOINT_ORIGINS = ['operator', 'portal'] as const;
export type EndpointOrigin = (typeof ENDPOINT_ORIGINS)[number];

/**
 * The address rule of an endpoint, by who made it. The operator's `webhooks.allow_private_addresses`
 * is for the operator's own receivers: a customer's endpoint follows
 * `portal.webhooks.allow_private_addresses` alone, or a customer could have the gateway post to
 * its internal network and read the answers back in the delivery log.
 */
export function endpointPolicy(
  origin: EndpointOrigin,
  config: {
    webhooks: { allow_private_addresses: boolean; allow_http: boolean };
    portal: { webhooks: { allow_private_addresses: boolean } };
  },
): AddressPolicy {
  const allowHttp = config.webhooks.allow_http;
  if (origin === 'portal')
    return {
      allowPrivate: config.portal.webhooks.allow_private_addresses,
      allowHttp,
      privateSetting: 'portal.webhooks.allow_private_addresses',
    };
  return { allowPrivate: config.webhooks.allow_private_addresses, allowHttp, privateSetting: OPERATOR_SETTING };
}

export interface Target {
  address: string;
  family: number;
}

/**
 * The address a URL's host resolves to, checked: every address the name has must be allowed (a
 * name with one private address among public ones is refused, as a rebinding attacker would
 * arrange). Throws RefusedAddress with the reason. The one rule of webhooks and billing exporters.
 */
export async function checkedAddress(url: URL, policy: AddressPolicy): Promise<Target> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp))
    throw new RefusedAddress(
      `${url.protocol} is not allowed: https is required (webhooks.allow_http)${alsoPrivate(host, policy)}`,
      'scheme',
    );
  let found: Target[];
  if (isIP(host) !== 0) found = [{ address: host, family: isIP(host) }];
  else {
    try {
      found = await lookup(host, { all: true, verbatim: true });
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new RefusedAddress(`cannot resolve ${host}: ${why}`, 'unresolved');
    }
  }
  const first = found[0];
  if (first === undefined) throw new RefusedAddress(`${host} has no address`, 'unresolved');
  const bad = policy.allowPrivate ? undefined : found.find((a) => !isPublicAddress(a.address));
  if (bad)
    throw new RefusedAddress(`${host} resolves to ${bad.address}, ${PRIVATE} (${policy.privateSetting})`, 'private');
  return first;
}

const PRIVATE = 'a loopback, private, link-local or metadata address';

/**
 * A refused scheme's second reason, when the host is plainly refused too (an internal address, or
 * `localhost`): a newcomer's `http://127.0.0.1` receiver learns both settings at once, not one
 * per try. A name is not resolved for it.
 */
function alsoPrivate(host: string, policy: AddressPolicy): string {
  if (policy.allowPrivate) return '';
  const address = host === 'localhost' ? '127.0.0.1' : host;
  if (isIP(address) === 0 || isPublicAddress(address)) return '';
  return `; and ${host} is ${PRIVATE} (${policy.privateSetting})`;
}

/**
 * A URL's host when it is an IP address the policy refuses, with why; else null. The config's
 * own check, before any name is resolved: a name is judged at each connection.
 */
export function refusedLiteral(url: string, allowPrivate: boolean): string | null {
  if (allowPrivate || !URL.canParse(url)) return null;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 && !isPublicAddress(host) ? `${host} is ${PRIVATE} (${OPERATOR_SETTING})` : null;
}

/**
 * The connection's own resolution: the checked address, so that a name that changes its answer
 * between the check and the connection (DNS rebinding) cannot lead elsewhere.
 */
export function pinnedLookup(target: Target): LookupFunction {
  return (_host, options, callback) => {
    if ((options as { all?: boolean }).all) callback(null, [target] as never, target.family);
    else callback(null, target.address, target.family);
  };
}
