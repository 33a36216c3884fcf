import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client's address as the invalid-key throttle counts it. Behind a load balancer the socket
 * address is the balancer's, so for connections from `trusted` proxies the address comes from
 * `X-Forwarded-For`: the right-most hop that is not itself a trusted proxy (hops to its left
 * are whatever the client claimed). IPv6 clients are grouped by /64, since one host can rotate
 * through its whole /64 at will.
 */
export function clientAddress(req: IncomingMessage, trusted: ReadonlySet<string>): string {
  let address = plain(req.socket.remoteAddress ?? '');
  const forwarded = req.headers['x-forwarded-for'];
  if (trusted.has(address) && typeof forwarded === 'string') {
    const hops = forwarded.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plain((hops[i] as string).trim());
      if (!isIPv4(hop) && !isIPv6(hop)) break;
      address = hop;
      if (!trusted.has(hop)) break;
    }
  }
  return isIPv6(address) ? prefix64(address) : address;
}

/** `::ffff:1.2.3.4` is an IPv4 client on a dual-stack socket. */
const plain = (a: string): string => (a.startsWith('::ffff:') && isIPv4(a.slice(7)) ? a.slice(7) : a);

function prefix64(address: string): string {
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
