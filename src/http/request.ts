import type { IncomingMessage } from 'node:http';

export interface Target {
  path: string;
  query: URLSearchParams;
}

/** Splits the request target without `new URL` (absolute-form targets are rare, so they pay for it). */
export function parseTarget(url: string): Target | null {
  if (url.startsWith('/')) {
    const q = url.indexOf('?');
    return q === -1
      ? { path: url, query: new URLSearchParams() }
      : { path: url.slice(0, q), query: new URLSearchParams(url.slice(q + 1)) };
  }
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? { path: u.pathname, query: u.searchParams } : null;
  } catch {
    return null;
  }
}

export type KeyInput = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'key'; key: string };

// Keys are printable ASCII; anything else (a garbled percent-escape decodes to U+FFFD) cannot exist.
const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * The API key from `api_key` or the `X-API-Key` header. Absent or empty is missing; more than one
 * different value, or one no key could have, is malformed and gets the invalid-key answer.
 */
export function readKey(req: IncomingMessage, query: URLSearchParams, maxLength: number): KeyInput {
  const fromQuery = query.getAll('api_key').filter((v) => v !== '');
  const header = req.headers['x-api-key'];
  const fromHeader = typeof header === 'string' && header !== '' ? [header] : [];
  const all = [...new Set([...fromQuery, ...fromHeader])];
  if (all.length === 0) return { kind: 'missing' };
  const [key] = all;
  if (all.length > 1 || fromQuery.length > 1 || key === undefined) return { kind: 'malformed' };
  if (key.length > maxLength || !PRINTABLE.test(key)) return { kind: 'malformed' };
  return { kind: 'key', key };
}

/** URL for logs: the key's value never leaves this function. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]api_key=)[^&#]*/gi, '$1[REDACTED]');
}
