/**
 * CORS for browser integrations, off unless `server.cors_origins` lists origins. Only those
 * origins get `Access-Control-Allow-Origin` (echoed, never `*`), and their preflights are
 * answered; the key travels in `X-API-Key` (or FuelSA's `key` on its routes), the one request
 * header a preflight allows.
 */
import type { Config } from '../config/config-schema.js';
import { send } from './answer.js';
import type { Exchange } from './core-types.js';
import { ALLOWED_METHODS } from './response-headers.js';

/** Headers a page may read from an answer besides the simple ones. */
const EXPOSED =
  'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit-Policy, RateLimit, Retry-After, ETag, X-Request-Id';
const PREFLIGHT_MAX_AGE_S = 600;

export const corsOrigins = (config: Config): ReadonlySet<string> | null =>
  config.server.cors_origins.length === 0 ? null : new Set(config.server.cors_origins);

const PREFLIGHT = [
  'Access-Control-Allow-Methods',
  ALLOWED_METHODS,
  'Access-Control-Allow-Headers',
  'X-API-Key',
  'Access-Control-Max-Age',
  PREFLIGHT_MAX_AGE_S,
  'Cache-Control',
  'no-store',
];

/** The preflight of a route that also takes the key in another header (FuelSA's `key`). */
const withKeyHeader = (name: string): typeof PREFLIGHT =>
  PREFLIGHT.map((v) => (v === 'X-API-Key' ? `X-API-Key, ${name}` : v));

/**
 * Marks the answer for an allowed origin, and answers its preflight (true: answered). Requests
 * without `Origin` (servers, curl) are untouched.
 */
export function cors(x: Exchange, origins: ReadonlySet<string>): boolean {
  const origin = x.req.headers.origin;
  if (origin === undefined) return false;
  x.res.setHeader('Vary', 'Origin');
  if (!origins.has(origin)) return false;
  x.res.setHeader('Access-Control-Allow-Origin', origin);
  if (x.req.method === 'OPTIONS' && x.req.headers['access-control-request-method'] !== undefined) {
    const { keyHeader } = x.route;
    send(x, 204, keyHeader === undefined ? PREFLIGHT : withKeyHeader(keyHeader), '');
    return true;
  }
  x.res.setHeader('Access-Control-Expose-Headers', EXPOSED);
  return false;
}
