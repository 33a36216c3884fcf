import { crc32 } from 'node:zlib';

/**
 * The shape of an API key: `fpg_` + 32 random base64url characters (192 bits) + 6 checksum
 * characters. The prefix makes a leaked key recognisable to secret scanners; the checksum lets the
 * gateway refuse a mistyped or made-up key without asking the store, and lets the log scrubber
 * (log/scrub.ts) tell a key, whole or in pieces, from any other string. A foundation module, since
 * both the key handling and the log need it.
 */
export const KEY_PREFIX = 'fpg_';
export const KEY_BODY_LENGTH = 32;
/** Body and checksum: what follows the prefix. */
export const KEY_TAIL_LENGTH = KEY_BODY_LENGTH + 6;
const SHAPE = /^fpg_[A-Za-z0-9_-]{38}$/;

export function keyChecksum(body: string): string {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(crc32(KEY_PREFIX + body));
  return buf.toString('base64url').slice(0, 6);
}

// The checksum is 36 bits of base64url over a 32-bit CRC: its last character's low 4 bits are 0.
const LAST_CHECKSUM_CHAR = /[AQgw]/;

/**
 * True when the 38 characters of `text` from `at` (a key without its prefix) end in the checksum
 * of their body. The log scrubber tries this on every window of long words: the look at the last
 * character spares the CRC in 15 windows of 16.
 */
export function tailValidates(text: string, at = 0): boolean {
  const end = at + KEY_TAIL_LENGTH;
  if (end > text.length || !LAST_CHECKSUM_CHAR.test(text.charAt(end - 1))) return false;
  return text.slice(at + KEY_BODY_LENGTH, end) === keyChecksum(text.slice(at, at + KEY_BODY_LENGTH));
}

/** True when the key has our shape and its checksum matches: only then is it worth a lookup. */
export const isWellFormedKey = (key: string): boolean => SHAPE.test(key) && tailValidates(key.slice(KEY_PREFIX.length));
