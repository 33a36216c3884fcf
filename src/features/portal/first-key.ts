/**
 * The first key of an account made by a sign-up, shown once on the first page after sign-in. The
 * account's creation gives its secret; the store keeps it only sealed with a key derived from the
 * new session's token, which the store never holds (it keeps the token's hash), so a copy of the
 * store reveals nothing. Any gateway of the fleet can open it on the first page, once.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { PortalStore } from '../../store/store.js';
import { tokenHash } from './tokens.js';

/** Long enough for the redirect after the link, and a slow first page. */
const HELD_MS = 15 * 60_000;

const keyOf = (sessionToken: string): Buffer =>
  Buffer.from(hkdfSync('sha256', sessionToken, '', 'fpg portal first key', 32));

export async function holdFirstKey(store: PortalStore, sessionToken: string, apiKey: string): Promise<void> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(sessionToken), iv);
  const sealed = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
  const value = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  await store.holdOnce('first_key', tokenHash(sessionToken), value, HELD_MS);
}

/** The first key's secret, once, for the session whose token this is; null when none is held (or was shown). */
export async function takeFirstKey(store: PortalStore, sessionToken: string): Promise<string | null> {
  const held = await store.takeOnce('first_key', tokenHash(sessionToken));
  if (held === null) return null;
  const raw = Buffer.from(held, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(sessionToken), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
