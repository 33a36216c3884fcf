import type { IncomingMessage } from 'node:http';
import { BlockList, isIPv4, isIPv6, type Socket } from 'node:net';
import type { Config } from '../config/config-schema.js';

const bySocket = new WeakMap<Socket, string>();

/**
 * `clientAddress`, worked out once per connection when no proxy is trusted: the socket alone
 * decides it then, and keep-alive connections carry many requests.
 */
export function connectionClient(req: IncomingMessage, trusted: TrustedProxies): string {
  if (trusted.size > 0) return clientAddress(req, trusted);
  let address = bySocket.get(req.socket);
  if (address === undefined) {
    address = clientAddress(req, trusted);
    bySocket.set(req.socket, address);
  }
  return address;
}

/**
 * The client's address as the invalid-key throttle counts it. Behind a load balancer the socket
 * address is the balancer's, so for connections from `trusted` proxies the address comes from
 * `X-Forwarded-For`: the right-most hop that is not itself a trusted proxy (hops to its left
 * are whatever the client claimed). IPv6 clients are grouped by /64, since one host can rotate
 * through its whole /64 at will. `trusted` holds canonical addresses (see `canonicalIp`).
 */
export function clientAddress(req: IncomingMessage, trusted: TrustedProxies): string {
  const address = clientIp(req, trusted);
  return isIPv6(address) ? prefix64(address) : address;
}

/**
 * The client's address as `clientAddress` finds it, before IPv6 is grouped by /64: what a key's
 * address allowlist is matched against (canonical, so an IPv4-mapped peer is its IPv4 address).
 */
export function clientIp(req: IncomingMessage, trusted: TrustedProxies): string {
  let address = canonicalIp(req.socket.remoteAddress ?? '') ?? '';
  const forwarded = req.headers['x-forwarded-for'];
  if (trusted.has(address) && typeof forwarded === 'string') {
    const hops = forwarded.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = canonicalIp(hops[i] as string);
      if (hop === null) break;
      address = hop;
      if (!trusted.has(hop)) break;
    }
  }
  return address;
}

/**
 * `server.trusted_proxies`: addresses and CIDR ranges (a compose or Kubernetes network's
 * addresses are not fixed), matched with node's BlockList. Entries are validated by the config.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  constructor(entries: readonly string[]) {
    this.size = entries.length;
    for (const entry of entries) {
      const [address = '', bits] = entry.split('/');
      const canonical = canonicalIp(address) ?? address;
      const family = isIPv4(canonical) ? 'ipv4' : 'ipv6';
      if (bits === undefined) this.list.addAddress(canonical, family);
      else this.list.addSubnet(canonical, Number(bits), family);
    }
  }

  /** Whether a canonical address (see `canonicalIp`) is a trusted proxy. */
  has(address: string): boolean {
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
    return family !== null && this.size > 0 && this.list.check(address, family);
  }
}

export const trustedProxies = (config: Config): TrustedProxies => new TrustedProxies(config.server.trusted_proxies);

/**
 * One spelling per address, so lookups match however a proxy or the config wrote it: ports and
 * brackets dropped (`1.2.3.4:80`, `[::1]:443`), IPv6 lower-case and compressed, IPv4-mapped
 * IPv6 as plain IPv4. Null for anything that is not an IP address.
 */
export function canonicalIp(raw: string): string | null {
  let s = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1] as string;
  else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(':'));
  s = s.split('%')[0] as string;
  if (isIPv4(s)) return s;
  if (!isIPv6(s)) return null;
  const compressed = new URL(`http://[${s}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (!mapped) return compressed;
  const hi = parseInt(mapped[1] as string, 16);
  const lo = parseInt(mapped[2] as string, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function prefix64(address: string): string {
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).join(':')}::/64`;
}
