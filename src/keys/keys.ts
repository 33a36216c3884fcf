import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API keys look like `fpg_` + 32 random base64url characters (192 bits) + 6 checksum characters.
 * The prefix makes a leaked key recognisable to secret scanners; the checksum lets the gateway
 * refuse a mistyped or made-up key without asking the store.
 */
const PREFIX = 'fpg_';
const BODY_LENGTH = 32;
const SHAPE = /^fpg_[A-Za-z0-9_-]{38}$/;

function checksum(body: string): string {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(crc32(PREFIX + body));
  return buf.toString('base64url').slice(0, 6);
}

export function generateKey(): string {
  const body = randomBytes(24).toString('base64url');
  return PREFIX + body + checksum(body);
}

/** True when the key has our shape and its checksum matches: only then is it worth a lookup. */
export function isWellFormedKey(key: string): boolean {
  if (!SHAPE.test(key)) return false;
  const body = key.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return key.slice(PREFIX.length + BODY_LENGTH) === checksum(body);
}

/** The only form in which a key is stored or used as a lookup key. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
