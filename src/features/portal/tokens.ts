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

/** A cookie of the request by name (the first), or undefined. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
