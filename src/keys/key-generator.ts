import { createHash, randomBytes } from 'node:crypto';
import { KEY_PREFIX, keyChecksum } from '../key-format.js';

/** A new key (format in key-format.ts): 24 random bytes as the body, then its checksum. */
export function generateKey(): string {
  const body = randomBytes(24).toString('base64url');
  return KEY_PREFIX + body + keyChecksum(body);
}

/** The only form in which a key is stored or used as a lookup key. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
