import type { IncomingMessage } from 'node:http';
import { scrubKeys } from '../log/scrub.js';

/**
 * Refuses what Node's parser lets through: a second `Host` (400), none on HTTP/1.1 (400, which
 * Node would answer without our body), more header fields than `max_headers` (431: Node would
 * drop those beyond its own count silently, and they do not count towards `max_header_bytes`).
 */
export function headProblem(req: IncomingMessage, maxHeaders: number): 'bad_request' | 'headers_too_large' | null {
  const raw = req.rawHeaders;
  if (raw.length > 2 * maxHeaders) return 'headers_too_large';
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // The usual spellings first: toLowerCase makes a new string of every other.
    if (name.length === 4 && (name === 'Host' || name === 'host' || name.toLowerCase() === 'host')) hosts++;
  }
  return hosts > 1 || (hosts === 0 && req.httpVersion === '1.1') ? 'bad_request' : null;
}

export interface Target {
  path: string;
  /** The raw query, after `?`; parsed only where it is read. */
  search: string;
}

/**
 * Splits the request target without `new URL` (absolute-form targets are rare, so they pay for it).
 * A target with a `#` is refused (null): a fragment is never part of a request target (RFC 9112
 * 3.2), and the URL parsers downstream cut the target there, so the origin would be sent the path
 * without its query and without the service key.
 */
export function parseTarget(url: string): Target | null {
  if (url.includes('#')) return null;
  if (url.startsWith('/')) {
    const q = url.indexOf('?');
    return q === -1 ? { path: url, search: '' } : { path: url.slice(0, q), search: url.slice(q + 1) };
  }
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? { path: u.pathname, search: u.search.slice(1) } : null;
  } catch {
    return null;
  }
}

export type KeyInput = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'key'; key: string };

// Keys are printable ASCII; anything else (a garbled percent-escape decodes to U+FFFD) cannot exist.
const PRINTABLE = /^[\x21-\x7e]+$/;

// The common query, `api_key=K` alone with nothing to decode, read without URLSearchParams.
export const PLAIN_KEY_PARAM = 'api_key=';
const PLAIN_KEY = /^api_key=[\w-]+$/;
/** The query is `api_key=K` alone, K of key characters: its URL is logged as the route's `plainKeyUrl`. */
export const isPlainKeySearch = (search: string): boolean => PLAIN_KEY.test(search);
const PLAIN_KEY_URL = /^[^?]*\?api_key=[\w-]+$/;

const MISSING: KeyInput = { kind: 'missing' };
const MALFORMED: KeyInput = { kind: 'malformed' };

/**
 * A header's value as `req.headers` gives it (repeats joined with ", "), read from the raw list:
 * `req.headers` builds an object of every header on first use, which a metered request otherwise
 * never needs. `name` is lower case.
 */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i] as string;
    if (n.length !== name.length || n.toLowerCase() !== name) continue;
    value = value === undefined ? (raw[i + 1] as string) : `${value}, ${raw[i + 1] as string}`;
  }
  return value;
}

/**
 * The API key from `api_key` or the `X-API-Key` header (`header`, as `headerValue` reads it).
 * Absent or empty is missing; a repeated parameter, a header that disagrees with the parameter,
 * or a value no key could have is malformed and gets the invalid-key answer.
 */
export function readKey(search: string, header: string | undefined, maxLength: number): KeyInput {
  let key: string | undefined;
  if (PLAIN_KEY.test(search)) key = search.slice(PLAIN_KEY_PARAM.length);
  else {
    for (const value of new URLSearchParams(search).getAll('api_key')) {
      if (value === '') continue;
      if (key !== undefined) return MALFORMED;
      key = value;
    }
  }
  if (header !== undefined && header !== '') {
    if (key !== undefined && key !== header) return MALFORMED;
    key = header;
  }
  if (key === undefined) return MISSING;
  return key.length > maxLength || !PRINTABLE.test(key) ? MALFORMED : { kind: 'key', key };
}

/** A URL for any log line: scrubbed, then `api_key` redacted (see accessUrl). */
export const logUrl = (url: string): string => redactUrl(scrubKeys(url));

/**
 * A URL as the access log writes it: scrubbed of what may be a key, then `api_key` redacted,
 * then JSON-encoded. Scrubbed first, since the checksum needs every piece of a key split over
 * parameters, the one in a key position too. Only the URL can carry a key in the wrong place, so
 * the access log scrubs it alone (scanning the whole line costs several times more:
 * docs/performance.md).
 */
export const accessUrl = (url: string): string => JSON.stringify(logUrl(url));

/**
 * URL for logs: the value of every parameter whose decoded name is `api_key` (in any case, and
 * however it is percent-encoded) is replaced, as is any parameter whose name cannot be decoded.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  if (PLAIN_KEY_URL.test(url)) return `${url.slice(0, q)}?api_key=[REDACTED]`;
  const pairs = url
    .slice(q + 1)
    .split('&')
    .map((pair, i) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      // URLSearchParams drops one leading '?' (`path??api_key=K` reads the key), so must we.
      const bare = i === 0 && name.startsWith('?') ? name.slice(1) : name;
      let decoded: string | null;
      try {
        decoded = decodeURIComponent(bare.replace(/\+/g, ' ')).toLowerCase();
      } catch {
        decoded = null;
      }
      return decoded === null || decoded === 'api_key' ? `${name}=[REDACTED]` : pair;
    });
  return `${url.slice(0, q)}?${pairs.join('&')}`;
}
