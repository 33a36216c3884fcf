/** The `upstream` section of the config: the origin the gateway may stand in front of. */
import { z } from 'zod';
import { nonNegInt, posInt } from './fields.js';

// The gateway's own paths (exact, or a prefix ending in `*`): a pass-through entry must never take them from it.
export const RESERVED_PATHS = [
  '/fuel-api/api/simple-current.php',
  '/fuel-api/api/current.php',
  '/healthz',
  '/readyz',
  '/exapi/fuel/current',
  '/exapi/fuel/byyear/*',
  '/fuel-api/secret-scanning',
  '/portal',
  '/portal/*',
];

/** A `proxy_paths` entry: an exact path, or a prefix ending in `*`. */
export const proxyPathMatches = (entry: string, path: string): boolean =>
  entry.endsWith('*') ? path.startsWith(entry.slice(0, -1)) : path === entry;

const proxyPath = z
  .string()
  .regex(
    /^\/[A-Za-z0-9._~!$&'()+,;=:@/-]*\*?$/,
    'expected a path starting with "/", optionally ending in "*" (a prefix)',
  )
  .refine(
    (p) => !p.split('/').some((seg) => seg === '.' || seg === '..'),
    'expected a path without "." or ".." segments',
  )
  .refine((p) => !RESERVED_PATHS.some((r) => proxyPathMatches(p, r) || proxyPathMatches(r, p)), {
    message: `would shadow one of the gateway's own paths (${RESERVED_PATHS.join(', ')})`,
  });

/** `upstream.cache`: the pass-through cache (one per gateway process, shared by every account). */
const cache = z
  .strictObject({
    default_ttl_s: nonNegInt.describe(
      'Freshness of a stored origin answer without Cache-Control max-age / s-maxage (0: such answers are not stored)',
    ),
    paths: z
      .record(
        z.string(),
        z.strictObject({ default_ttl_s: nonNegInt.describe('default_ttl_s for this proxy_paths entry') }),
      )
      .describe('Per proxy_paths entry (the same spelling): its own default_ttl_s'),
    stale_while_revalidate_s: nonNegInt.describe(
      'Past its freshness, an entry is served at once (X-Cache: STALE) for this long while one background request refreshes it',
    ),
    stale_if_error_s: nonNegInt.describe(
      'Past its freshness, an entry is served (counted as a success) for this long while the origin is down, too slow or answers 5xx',
    ),
    max_bytes: nonNegInt.describe(
      'Bytes held by the cache in all, bodies, headers and keys (0: no cache, every answer BYPASS)',
    ),
    max_entry_bytes: posInt.describe('Largest answer stored; a larger one is passed on (X-Cache: BYPASS)'),
    purge_on_prices: z
      .boolean()
      .describe('Empty the cache when a price set is published or a new one is polled (the history changes with it)'),
  })
  .refine((c) => c.max_bytes === 0 || c.max_entry_bytes <= c.max_bytes, {
    path: ['max_entry_bytes'],
    message: 'expected at most max_bytes',
  });

export const upstream = z
  .strictObject({
    url: z
      .union([
        z.literal(''),
        z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL, or "" for none' }),
      ])
      .describe(
        'Base URL of an existing fuel-price service in front of which the gateway stands (env UPSTREAM_URL); empty: none',
      ),
    // The gateway's own key at the origin: a secret, masked by `config check` and never logged.
    api_key: z
      .string()
      .describe("The gateway's own key at the origin (env UPSTREAM_API_KEY); a secret, masked and never logged"),
    poll_interval_ms: posInt
      .min(100, 'expected at least 100')
      .describe("How often one instance polls the origin's current.php"),
    timeout_ms: posInt.describe('Time allowed for each origin request, polls and pass-through alike (then 504)'),
    proxy_paths: z
      .array(proxyPath)
      .describe('Public paths passed through to the origin, metered: exact, or a prefix ending in *'),
    max_sockets: posInt.describe('Kept-alive connections to the origin for pass-through, at most'),
    cache,
  })
  .refine((u) => u.url === '' || u.api_key !== '', { path: ['api_key'], message: 'required when upstream.url is set' })
  .refine((u) => u.url !== '' || u.proxy_paths.length === 0, { path: ['proxy_paths'], message: 'needs upstream.url' })
  .superRefine((u, ctx) => {
    for (const entry of Object.keys(u.cache.paths))
      if (!u.proxy_paths.includes(entry))
        ctx.addIssue({ code: 'custom', path: ['cache', 'paths', entry], message: 'expected an entry of proxy_paths' });
  });
