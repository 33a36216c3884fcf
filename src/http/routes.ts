import { proxyPathMatches, type Config } from '../config/schema.js';
import { CSV_HEADER, type CurrentPrices, type Snapshot } from '../prices/snapshot.js';
import type { ErrorKind } from './errors.js';

/** What a metered route will answer once the request is counted: `head + usage + tail`. */
export interface Prepared {
  contentType: string;
  head: string;
  tail: string;
  /** Whether the per-request `usage` object goes between head and tail. */
  withUsage: boolean;
}

export interface MeteredRoute {
  kind: 'metered';
  /** Label for metrics and logs. */
  name: string;
  /** Validates the query and picks the answer; an error kind refuses the request before it is counted. */
  prepare(query: URLSearchParams, snapshot: Snapshot): Prepared | ErrorKind;
}

/** A path passed through to the origin: metered here, answered there. `name` is its `proxy_paths` entry. */
export interface ProxyRoute {
  kind: 'proxy';
  name: string;
}

export type Route = MeteredRoute | ProxyRoute | { kind: 'health'; name: string } | { kind: 'ready'; name: string };

const JSON_TYPE = 'application/json';

// One Prepared per price set and envelope, so a current-price request allocates none.
const simple = new WeakMap<CurrentPrices, Prepared>();
const full = new WeakMap<CurrentPrices, Prepared>();

function envelope(cache: WeakMap<CurrentPrices, Prepared>, current: CurrentPrices | null, head: (c: CurrentPrices) => string): Prepared | ErrorKind {
  if (current === null) return 'unavailable';
  let p = cache.get(current);
  if (!p) cache.set(current, (p = { contentType: JSON_TYPE, head: head(current), tail: '}', withUsage: true }));
  return p;
}

const MONTH = /^(0?[1-9]|1[0-2])$/;
const YEAR = /^\d{4}$/;

function historical(query: URLSearchParams, snap: Snapshot): Prepared | ErrorKind {
  const month = query.get('month') ?? '';
  const year = query.get('year') ?? '';
  if (!MONTH.test(month)) return 'invalid_month';
  if (!YEAR.test(year)) return 'invalid_year';
  const m = Number(month);
  const y = Number(year);
  const answer = snap.months.get(`${year}-${String(m).padStart(2, '0')}`);
  if (query.get('format') === 'csv') {
    return { contentType: 'text/csv; charset=utf-8', head: answer?.csv ?? `${CSV_HEADER}\r\n`, tail: '', withUsage: false };
  }
  const body = `{"success":true,"month":${m},"year":${y},"results":${answer?.json ?? '[]'}}`;
  return { contentType: JSON_TYPE, head: body, tail: '', withUsage: false };
}

/**
 * The only table of public paths: the gateway's own first, then `upstream.proxy_paths`. The
 * config refuses an entry that would take a current endpoint or a probe; one that covers
 * historical.php takes it, so the origin's history is served instead of the local one.
 */
export function buildRoutes(config: Config): (path: string) => Route | undefined {
  const own = new Map<string, Route>([
    ['/fuel-api/api/simple-current.php', { kind: 'metered', name: 'simple-current', prepare: (_q, s) => envelope(simple, s.current, (c) => c.simplePrefix) }],
    ['/fuel-api/api/current.php', { kind: 'metered', name: 'current', prepare: (_q, s) => envelope(full, s.current, (c) => c.fullPrefix) }],
    [
      '/fuel-api/api/historical.php',
      { kind: 'metered', name: 'historical', prepare: config.prices.historical_enabled ? historical : () => 'historical_disabled' },
    ],
    ['/healthz', { kind: 'health', name: 'healthz' }],
    ['/readyz', { kind: 'ready', name: 'readyz' }],
  ]);
  const proxied: ProxyRoute[] = config.upstream.url === '' ? [] : config.upstream.proxy_paths.map((name) => ({ kind: 'proxy', name }));
  for (const path of own.keys()) if (proxied.some((r) => proxyPathMatches(r.name, path))) own.delete(path);
  return (path) => own.get(path) ?? proxied.find((r) => proxyPathMatches(r.name, path));
}

export const ALLOWED_METHODS = 'GET, HEAD';
