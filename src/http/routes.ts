import { type Config, proxyPathMatches } from '../config/schema.js';
import { changes, historical } from '../features/history/history.js';
import { openApiDocument } from '../features/openapi/document.js';
import { pageAssets, type StaticAnswer, staticAnswer } from '../features/page/assets.js';
import { PublicPage } from '../features/page/page.js';
import type { CurrentPrices, Snapshot } from '../prices/snapshot.js';
import type { ErrorKind } from './errors.js';

/** What a metered route will answer once the request is counted: `head + usage + tail`. */
export interface Prepared {
  contentType: string;
  head: string;
  tail: string;
  /** Whether the per-request `usage` object goes between head and tail. */
  withUsage: boolean;
  /** UTF-8 length of head and tail (the usage object is ASCII: its length is its byte count). */
  bytes: number;
}

export interface MeteredRoute {
  kind: 'metered';
  /** Label for metrics and logs. */
  name: string;
  /**
   * Validates the query (the raw text after `?`, parsed only by routes that read it) and picks
   * the answer; an error kind refuses the request before it is counted.
   */
  prepare(search: string, snapshot: Snapshot): Prepared | ErrorKind;
}

/** A path passed through to the origin: metered here, answered there. `name` is its `proxy_paths` entry. */
export interface ProxyRoute {
  kind: 'proxy';
  name: string;
}

export type Route =
  | MeteredRoute
  | ProxyRoute
  | { kind: 'health'; name: string }
  | { kind: 'ready'; name: string }
  /** usage.php: the key judged as on a metered route, nothing counted. */
  | { kind: 'usage'; name: string }
  /** `/`, rendered once per price set. */
  | { kind: 'page'; name: string; page: PublicPage }
  /** A fixed answer built at start: openapi.json, the page's assets. */
  | { kind: 'static'; name: string; answer: StaticAnswer };

const JSON_TYPE = 'application/json';

// One Prepared per price set and envelope, so a current-price request allocates none.
const simple = new WeakMap<CurrentPrices, Prepared>();
const full = new WeakMap<CurrentPrices, Prepared>();

function envelope(
  cache: WeakMap<CurrentPrices, Prepared>,
  current: CurrentPrices | null,
  head: (c: CurrentPrices) => string,
): Prepared | ErrorKind {
  if (current === null) return 'unavailable';
  let p = cache.get(current);
  if (!p) {
    const h = head(current);
    p = { contentType: JSON_TYPE, head: h, tail: '}', withUsage: true, bytes: Buffer.byteLength(h) + 1 };
    cache.set(current, p);
  }
  return p;
}

/**
 * The only table of public paths: the gateway's own, looked up exactly, then `proxyRoutes`.
 * The config refuses a pass-through entry that would take a current endpoint or a probe; one
 * that covers historical.php takes it, so the origin's history is served instead of ours.
 */
export function buildRoutes(config: Config): Map<string, Route> {
  const own = new Map<string, Route>([
    [
      '/fuel-api/api/simple-current.php',
      {
        kind: 'metered',
        name: 'simple-current',
        prepare: (_q, s) => envelope(simple, s.current, (c) => c.simplePrefix),
      },
    ],
    [
      '/fuel-api/api/current.php',
      { kind: 'metered', name: 'current', prepare: (_q, s) => envelope(full, s.current, (c) => c.fullPrefix) },
    ],
    [
      '/fuel-api/api/historical.php',
      {
        kind: 'metered',
        name: 'historical',
        prepare: config.prices.historical_enabled ? historical : () => 'historical_disabled',
      },
    ],
    [
      '/fuel-api/api/changes.php',
      {
        kind: 'metered',
        name: 'changes',
        prepare: config.prices.historical_enabled ? changes : () => 'historical_disabled',
      },
    ],
    ['/fuel-api/api/usage.php', { kind: 'usage', name: 'usage' }],
    ['/healthz', { kind: 'health', name: 'healthz' }],
    ['/readyz', { kind: 'ready', name: 'readyz' }],
  ]);
  const doc = openApiDocument(config);
  const json = staticAnswer('application/json', JSON.stringify(doc), 'public, max-age=300');
  own.set('/fuel-api/openapi.json', { kind: 'static', name: 'openapi', answer: json });
  if (config.page.enabled) {
    own.set('/', { kind: 'page', name: 'page', page: new PublicPage(doc) });
    for (const [path, answer] of pageAssets()) own.set(path, { kind: 'static', name: 'assets', answer });
  }
  const proxied = proxyRoutes(config);
  for (const path of own.keys()) if (proxied.some((r) => proxyPathMatches(r.name, path))) own.delete(path);
  return own;
}

/** `upstream.proxy_paths`, in order: exact paths or prefixes ending in `*`. */
export const proxyRoutes = (config: Config): ProxyRoute[] =>
  config.upstream.url === '' ? [] : config.upstream.proxy_paths.map((name) => ({ kind: 'proxy', name }));

export const ALLOWED_METHODS = 'GET, HEAD';
