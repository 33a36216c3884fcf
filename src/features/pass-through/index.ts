/**
 * Pass-through: the `upstream.proxy_paths` entries, metered here and answered by the origin
 * (proxied.ts, then the cache in upstream/cache/ and upstream/proxy.ts). Each entry is a pattern route: an exact path or a prefix
 * ending in `*`, taking any of the gateway's own paths it covers. Not described in the API
 * document: the origin describes its own paths.
 */
import type { Config } from '../../config/config-schema.js';
import type { RouteDef } from '../../http/core-types.js';
import type { PassThrough } from '../../upstream/cache/cache.js';
import { proxied } from './proxied.js';

/** The pass-through routes, in `proxy_paths` order; none without an upstream (`proxy` null). */
export function passThroughRoutes(config: Config, proxy: PassThrough | null): RouteDef[] {
  if (proxy === null) return [];
  return config.upstream.proxy_paths.map((name) => {
    const target = { name, proxy };
    return {
      path: name,
      pattern: true,
      scope: 'passthrough',
      route: { kind: 'handler', name, handle: (x, t) => proxied(x, target, t) },
    };
  });
}
