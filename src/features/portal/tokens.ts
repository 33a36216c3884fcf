import { createHash, randomBytes } from 'node:crypto';

/**
 * A link's or a session's secret. The `fpg_` prefix is the log scrubber's (log/scrub.ts): a token
 * that reaches a log line by mistake (a URL, an error) is redacted there like an API key.
 */
export const newToken = (kind: 'link' | 'sess'): string => `fpg_${kind}_${randomBytes(32).toString('base64url')}`;

/** What the store keeps instead of a token. */
export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('base64url');

export const newCsrfToken = (): string => randomBytes(24).toString('base64url');

const TOKEN = /^fpg_(?:link|sess)_[A-Za-z0-9_-]{43}$/;
export const wellFormed = (token: string): boolean => TOKEN.test(token);

/**
 * The request's one cookie of this name, or undefined. Several different values are none: a
 * browser sends two only when another site of the same host or domain (another port, a
 * subdomain, a narrower path) planted one, and its own session must not stand in for the person's.
 */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  let found: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    if (found !== undefined && found !== value) return undefined;
    found = value;
  }
  return found;
}
