/**
 * What the pass-through cache may store and for how long, and under which key: decided from the
 * request target and the origin's answer alone, so the same answer is the same decision everywhere.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { JSON_TYPE } from '../forwarded-headers.js';

const CSV_TYPE = /^(?:text|application)\/csv\b/i;
// Unreserved (RFC 3986 2.3) but for `.`: a decoded `%2e` could make a dot segment.
const UNRESERVED = /[A-Za-z0-9\-_~]/;

/**
 * The path with RFC 3986 normalisation: escapes of unreserved characters decoded, other escapes
 * in upper case. `/a%7Eb` and `/a~b` are one resource; nothing else is merged.
 */
export function normalPath(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => {
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/**
 * The cache key: the normal path, `?`, and the query as the origin is sent it (decoded and
 * encoded again by URLSearchParams) without `api_key`, its parameters sorted by name (a stable
 * sort: repeated parameters keep their order). The service key is added after this, so it never
 * reaches a key.
 */
export function cacheKey(path: string, query: URLSearchParams): string {
  return keyFrom(path, new URLSearchParams(query));
}

/**
 * Cache keys of the targets seen last, without their `api_key` (so shared by every caller); a
 * target longer than KEPT_LENGTH is not kept, so the memo holds at most about 1 MiB.
 */
const KEYS_KEPT = 4096;
const KEPT_LENGTH = 256;
let keptKeys = new Map<string, string>();
const PLAIN_QUERY = /^[\w.~=&-]*$/;

/**
 * `cacheKey` from the raw query (without `?`), as a hit needs it: a query with nothing to decode
 * has its `api_key` parameters dropped as text and its key remembered, so the same query from
 * any caller costs one lookup. Anything else is parsed.
 */
export function cacheKeyOf(path: string, search: string): string {
  if (!PLAIN_QUERY.test(search)) return keyFrom(path, new URLSearchParams(search));
  let rest = '';
  for (const part of search.split('&')) {
    if (part === 'api_key' || part.startsWith('api_key=')) continue;
    rest = rest === '' ? part : `${rest}&${part}`;
  }
  const memo = `${path}?${rest}`;
  if (memo.length > KEPT_LENGTH) return keyFrom(path, new URLSearchParams(rest));
  let key = keptKeys.get(memo);
  if (key === undefined) {
    key = keyFrom(path, new URLSearchParams(rest));
    // Dropped whole when full: the queries in use come back at once, made-up ones do not.
    if (keptKeys.size >= KEYS_KEPT) keptKeys = new Map();
    keptKeys.set(memo, key);
  }
  return key;
}

function keyFrom(path: string, params: URLSearchParams): string {
  params.delete('api_key');
  params.sort();
  return `${normalPath(path)}?${params}`;
}

/** How long an answer may be stored and how; null when it may not be. */
export interface Freshness {
  /** Fresh for this long (ms) from when the origin made it. */
  freshMs: number;
  /** How old it already was when it was received (the origin's `Age`, ms). */
  ageMs: number;
  /** `must-revalidate` / `proxy-revalidate`: never served stale. */
  mustRevalidate: boolean;
}

function directives(headers: IncomingHttpHeaders): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (headers['cache-control'] ?? '').split(',')) {
    const [name = '', value = ''] = part.split('=', 2);
    const n = name.trim().toLowerCase();
    if (n !== '') out.set(n, value.trim().replace(/^"|"$/g, ''));
  }
  return out;
}

const seconds = (v: string | undefined): number | null => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);

/**
 * Freshness from the origin's Cache-Control (s-maxage, then max-age; less its Age), else
 * `defaultTtlS`; null when it must not be stored (no-store, private, no-cache, or no lifetime).
 */
export function freshness(headers: IncomingHttpHeaders, defaultTtlS: number): Freshness | null {
  const d = directives(headers);
  if (d.has('no-store') || d.has('private') || d.has('no-cache')) return null;
  const lifetime = seconds(d.get('s-maxage')) ?? seconds(d.get('max-age')) ?? defaultTtlS;
  const age = seconds(headers.age) ?? 0;
  if (lifetime - age <= 0) return null;
  return {
    freshMs: lifetime * 1000,
    ageMs: age * 1000,
    mustRevalidate: d.has('must-revalidate') || d.has('proxy-revalidate'),
  };
}

/**
 * Whether an origin answer may be shared by every account: a 200 of JSON or CSV, not varying by
 * anything of the request (Vary), setting no cookie (it is tied to whoever asked), and not
 * compressed in a way the cache would have to decode (JSON is decoded to carry the usage).
 */
export function shareable(status: number, headers: IncomingHttpHeaders): 'json' | 'csv' | null {
  if (status !== 200 || headers.vary !== undefined || headers['set-cookie'] !== undefined) return null;
  const type = headers['content-type'] ?? '';
  if (JSON_TYPE.test(type)) return 'json';
  const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  return CSV_TYPE.test(type) && encoding === 'identity' ? 'csv' : null;
}

/** The origin's headers a stored answer replays: the description of its body, nothing about who asked. */
export const REPLAYED = ['content-type', 'content-language', 'content-disposition', 'last-modified'];
