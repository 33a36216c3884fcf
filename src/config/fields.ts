/** The building blocks of the config schema: the kinds of value several sections use. */
import { isIP, isIPv4 } from 'node:net';
import { z } from 'zod';
import { estimatedBits } from './token-strength.js';

/** `10.0.0.5`, `fd00::1`, or a CIDR range `172.16.0.0/12`, `fd00::/8`. */
export function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

/** `scheme://host[:port]` exactly as a browser sends it in `Origin`. */
export function isOrigin(entry: string): boolean {
  try {
    const u = new URL(entry);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === entry;
  } catch {
    return false;
  }
}

/** True for hosts that only this machine can reach. */
export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || (isIPv4(host) && host.startsWith('127.'));

/**
 * Rules of an admin token on a listener other machines can reach: long, and about 128 bits by
 * the estimate of token-strength.ts (what `openssl rand -base64 32` gives is about 256).
 */
export const ADMIN_TOKEN_MIN_LENGTH = 32;
export const ADMIN_TOKEN_MIN_BITS = 128;

/**
 * Why the admin listener may not bind as configured: beyond loopback, other machines can try
 * tokens, so it needs one, and one that is long and hard to guess. Null when it may. On any
 * listener, a token that starts or ends with whitespace is refused rather than trimmed: a
 * client cannot send that whitespace in `Authorization`, so it would never match.
 */
export function adminListenerProblem(admin: { host: string; token: string }): {
  path: string[];
  message: string;
} | null {
  const path = ['listen', 'admin', 'token'];
  if (/^\s|\s$/.test(admin.token))
    return {
      path,
      message:
        'starts or ends with whitespace (a space, tab or line break), which no Authorization header can carry; nothing is trimmed: remove it',
    };
  if (isLoopback(admin.host)) return null;
  if (!admin.token)
    return {
      path: ['listen', 'admin', 'host'],
      message: `${admin.host} is not loopback: set listen.admin.token (ADMIN_TOKEN) to bind there`,
    };
  const hint = `on a non-loopback admin listener (${admin.host}) a token needs`;
  const example = '(for example: openssl rand -base64 32)';
  if (admin.token.length < ADMIN_TOKEN_MIN_LENGTH)
    return { path, message: `${hint} at least ${ADMIN_TOKEN_MIN_LENGTH} characters ${example}` };
  const bits = estimatedBits(admin.token);
  if (bits < ADMIN_TOKEN_MIN_BITS)
    return {
      path,
      message: `${hint} about ${ADMIN_TOKEN_MIN_BITS} bits of entropy; this one is estimated at ${bits} (runs such as aaa or abcd, and parts repeated, add nothing: docs/admin-api.md) ${example}`,
    };
  return null;
}

export const port = z.number({ error: 'expected a port number' }).int().min(0).max(65535);
export const posInt = z
  .number({ error: 'expected a positive integer' })
  .int('expected a positive integer')
  .positive('expected a positive integer');
export const nonNegInt = z.number({ error: 'expected a whole number ≥ 0' }).int().nonnegative();
export const message = z.string().min(1, 'expected a non-empty message');

export const listener = z.strictObject({
  host: z
    .string()
    .min(1)
    .describe(
      'Address to bind (::: every interface, IPv6 and IPv4, or IPv4 alone where IPv6 is off; 0.0.0.0: every IPv4 interface)',
    ),
  port: port.describe('TCP port (0: any free port)'),
});
export const redisNode = z.strictObject({
  host: z.string().min(1).describe('Host of the node'),
  port: port.min(1).describe('Port of the node'),
});
